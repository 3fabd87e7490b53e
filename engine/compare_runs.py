"""The body of ``evalhouse compare-runs``: judge which of two runs answered each case
better, in both orders, write the comparison to the lake and tell how each domain went.
``engine.pairwise`` holds the parts (pairs, judging, tallies); this wires them for one
comparison, as a command (or the dashboard, through the command) starts it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from engine import pairwise
from engine.clock import utcnow
from engine.judges.base import Usage
from engine.models import PairwiseRecord

if TYPE_CHECKING:
    from engine.judges.http.judge import HttpJudge


def build_judge(spec: str, cache_dir: Path, concurrency: int) -> HttpJudge | None:
    """The LLM judge of ``spec``, or None for ``local`` (the rule over stored scores)."""
    if spec.strip() == "local":
        return None
    from engine.judges.base import JudgeError
    from engine.judges.factory import build_llm_judge

    try:
        return build_llm_judge(spec, cache_dir=cache_dir, concurrency=concurrency)
    except JudgeError as exc:
        raise pairwise.ComparisonError(f"--judge {spec}: {exc}") from exc


def compare_runs(
    lake: Path,
    cache_dir: Path,
    pairs: list[pairwise.Pair],
    sides: tuple[pairwise.Side, pairwise.Side],
    *,
    labels: tuple[str, str],
    judge_spec: str,
    margin: float,
    concurrency: int,
    log: Callable[[str], None],
) -> str:
    """Judge ``pairs`` of ``sides`` (A, B), write the records to ``lake`` and return the
    comparison id. ``labels`` are the sides as the person named them. ``log`` is told the
    start, progress (at most a line a second, the last ``done/total`` of which the
    dashboard reads), one tally line per domain and the cost."""
    side_a, side_b = sides
    judge = build_judge(judge_spec, cache_dir, concurrency)
    now = utcnow()
    cid = pairwise.new_comparison_id(now)
    log(f"comparing {len(pairs)} pairs of {labels[0]} and {labels[1]} with {judge_spec}")
    if judge is not None:
        log(pairwise.estimate_pairs(pairs, judge_spec, concurrency).line())
    shown = [0.0]

    def progress(done: int, total: int) -> None:
        if done == total or time.monotonic() - shown[0] >= 1.0:
            shown[0] = time.monotonic()
            log(f"pairs judged: {done}/{total}")

    async def judged() -> tuple[list[PairwiseRecord], Usage]:
        try:
            return await pairwise.compare_pairs(
                pairs, judge, run_a=side_a.run_id, run_b=side_b.run_id, comparison_id=cid,
                now=now, margin=margin, concurrency=concurrency, progress=progress,
            )  # fmt: skip
        finally:
            if judge is not None:
                await judge.aclose()

    records, usage = asyncio.run(judged())
    pairwise.write_comparison(lake, records)
    for t in pairwise.tally(records):
        low, high = t.a_interval
        log(
            f"{t.domain}: A wins {t.wins_a}, ties {t.ties}, B wins {t.wins_b}"
            f" (A win rate 95% CI {low:.2f}-{high:.2f}; {t.inconsistent} inconsistent orders,"
            f" {t.errors} errors)"
        )
    if usage.calls:
        log(f"judge calls: {usage.calls}, ${usage.cost_usd:.4f}")
    return cid
