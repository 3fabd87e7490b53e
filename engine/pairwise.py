"""Head-to-head judging of two runs (``evalhouse compare-runs A B``).

Every case both runs answered (same iteration, same candidate, neither an error) is one
pair. An LLM judge is asked which answer is better twice, once with A's answer shown first
and once with B's (MT-Bench's remedy for position bias, Zheng et al. 2023); when the two
orders disagree the pair is recorded as a tie with ``consistent = false``, so position bias
is counted rather than hidden. The offline default is a deterministic rule: each answer's
quality is the mean of its accuracy, completeness and coverage_percent (claims found), all
0-100 and already computed by the runs; a difference within ``margin`` points is a tie.

Judgments are ``PairwiseRecord`` rows of the lake table ``pairwise`` (partition
``run_id=<comparison_id>/iteration=0``), which ingest loads like any other table; the
warehouse views ``pairwise_summary`` (win/tie/loss per domain with Wilson intervals) and
``ratings`` (Elo over every comparison) read them.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from engine.errors import InputError
from engine.judges.base import JudgeError, Usage
from engine.judges.http.graded import PairChoice
from engine.lake import list_parts, read_table, write_part
from engine.models import PairWinner, PairwiseRecord
from engine.stats import wilson

QUALITY_FIELDS = ("accuracy", "completeness", "coverage_percent")
"""``results`` fields (0-100) the local rule averages: accuracy, completeness, claims found."""

DEFAULT_MARGIN = 5.0
"""Quality points (0-100) within which the local rule calls a tie."""

DEFAULT_CONCURRENCY = 8
"""Judge calls in flight (``compare-runs --concurrency``)."""


Progress = Callable[[int, int], None]
"""Told (pairs judged, pairs in all) as a comparison goes."""


class ComparisonError(InputError):
    """Two runs cannot be compared (unknown run, nothing in common)."""


@dataclass(frozen=True)
class Pair:
    """Two answers to one case: run A's and run B's."""

    iteration: int
    sample_id: str
    candidate: str
    domain: str | None
    query: str
    answer_a: str
    answer_b: str
    values_a: Mapping[str, Any]
    values_b: Mapping[str, Any]
    candidate_b: str = ""


@runtime_checkable
class PairJudge(Protocol):
    """A judge that can say which of two answers, as shown, is better."""

    @property
    def name(self) -> str:
        """Judge identifier."""
        ...

    async def compare_pair(
        self, question: str, reference: str, first: str, second: str
    ) -> PairChoice:
        """``first``, ``second`` or ``tie``."""
        ...


@dataclass(frozen=True)
class Side:
    """One side of a comparison: a run, or one candidate of a run (``RUN:CANDIDATE``)."""

    run_id: str
    candidate: str | None = None

    @staticmethod
    def parse(text: str) -> Side:
        """``RUN`` or ``RUN:CANDIDATE`` (run ids never hold ':')."""
        run_id, sep, candidate = text.strip().partition(":")
        if not run_id or (sep and not candidate):
            raise ComparisonError(f"{text!r} is not RUN or RUN:CANDIDATE")
        return Side(run_id, candidate if sep else None)

    def __str__(self) -> str:
        return self.run_id if self.candidate is None else f"{self.run_id}:{self.candidate}"


def _rows(lake: Path, side: Side) -> list[dict[str, Any]]:
    if not any(p.run_id == side.run_id for p in list_parts(lake, ["results"])):
        raise ComparisonError(f"run {side.run_id!r} has no results in the lake ({lake})")
    rows = list(read_table(lake, "results", side.run_id).to_pylist())
    if side.candidate is None:
        return rows
    chosen = [r for r in rows if r["candidate"] == side.candidate]
    if not chosen:
        known = ", ".join(sorted({repr(r["candidate"]) for r in rows}))
        raise ComparisonError(
            f"run {side.run_id!r} has no candidate {side.candidate!r} (it has {known})"
        )
    return chosen


def _usable(row: Mapping[str, Any]) -> bool:
    return not row.get("error") and bool(str(row.get("response") or "").strip())


def pairs_from_lake(lake: Path, side_a: Side | str, side_b: Side | str) -> list[Pair]:
    """The pairs of two sides: cases both answered without error, matched by iteration and
    sample, and by candidate unless a side names its candidate (a resumed sample's latest
    row wins). Raises ComparisonError."""
    sides = [s if isinstance(s, Side) else Side.parse(s) for s in (side_a, side_b)]
    if sides[0] == sides[1]:
        raise ComparisonError(f"compare-runs needs two different sides, got {sides[0]} twice")
    by_candidate = all(s.candidate is None for s in sides)
    keyed: list[dict[tuple[int, str, str], dict[str, Any]]] = []
    for side in sides:
        latest: dict[tuple[int, str, str], dict[str, Any]] = {}
        for row in _rows(lake, side):
            cand = str(row["candidate"]) if by_candidate else ""
            latest[(int(row["iteration"]), str(row["sample_id"]), cand)] = row
        keyed.append(latest)
    pairs = []
    for key in sorted(keyed[0].keys() & keyed[1].keys()):
        a, b = keyed[0][key], keyed[1][key]
        if _usable(a) and _usable(b):
            pairs.append(
                Pair(key[0], key[1], str(a["candidate"]), a.get("domain"), str(a["query"]),
                     str(a["response"]), str(b["response"]), a, b, str(b["candidate"]))
            )  # fmt: skip
    if not pairs:
        raise ComparisonError(
            f"{sides[0]} and {sides[1]} have no case both answered without error "
            "(same sample and iteration" + (", and candidate)" if by_candidate else ")")
        )
    return pairs


def quality(values: Mapping[str, Any], fields: Sequence[str]) -> float | None:
    """Mean of ``fields`` of ``values`` (None when ``fields`` is empty)."""
    return sum(float(values[f]) for f in fields) / len(fields) if fields else None


def local_judgment(
    pair: Pair, margin: float = DEFAULT_MARGIN
) -> tuple[PairWinner, float | None, float | None, str]:
    """The deterministic rule: (winner, quality A, quality B, reason). Only the quality
    fields both answers have are compared; none in common is a tie."""
    shared = [
        f
        for f in QUALITY_FIELDS
        if isinstance(pair.values_a.get(f), int | float)
        and isinstance(pair.values_b.get(f), int | float)
    ]
    if not shared:
        return "tie", None, None, "no score both answers have: tie"
    qa, qb = quality(pair.values_a, shared), quality(pair.values_b, shared)
    assert qa is not None and qb is not None
    figures = ", ".join(
        f"{f} {float(pair.values_a[f]):g} vs {float(pair.values_b[f]):g}" for f in shared
    )
    diff = qa - qb
    if abs(diff) <= margin:
        verdict: PairWinner = "tie"
        why = f"within the margin of {margin:g}"
    else:
        verdict = "a" if diff > 0 else "b"
        why = f"{verdict.upper()} better by {abs(diff):.1f}"
    return verdict, qa, qb, f"{figures}; quality {qa:.1f} vs {qb:.1f}: {why}"


def combine(a_first: str, b_first: str) -> tuple[PairWinner, bool, PairWinner, PairWinner]:
    """Both orders' choices (``first``/``second``/``tie`` as shown) -> (winner, consistent,
    A-first winner, B-first winner). Disagreeing orders are a tie."""
    a_shown_first: dict[str, PairWinner] = {"first": "a", "second": "b"}
    b_shown_first: dict[str, PairWinner] = {"first": "b", "second": "a"}
    one = a_shown_first.get(a_first, "tie")
    two = b_shown_first.get(b_first, "tie")
    consistent = one == two
    return (one if consistent else "tie"), consistent, one, two


def _verdict(first: PairChoice, second: PairChoice) -> dict[str, Any]:
    """The fields of a pair judged in both orders (A shown first, B shown first)."""
    winner, consistent, one, two = combine(first.better, second.better)
    reason = f"A shown first: {one} ({first.reason}); B shown first: {two} ({second.reason})"
    if not consistent:
        reason = "the two orders disagree (position bias): tie; " + reason
    return {
        "winner": winner,
        "consistent": consistent,
        "a_first": one,
        "b_first": two,
        "reason": reason,
    }


async def judge_both_orders(
    pairs: Sequence[Pair],
    judge: PairJudge,
    concurrency: int,
    progress: Progress | None = None,
) -> list[tuple[dict[str, Any], Usage]]:
    """Every pair judged in both orders, ``concurrency`` calls in flight throughout.

    Each order of each pair is one job of one queue that ``concurrency`` workers drain, so
    a slow answer holds up one worker, never a batch, and the orders of different pairs
    overlap freely (no pair waits for its other order before the next call starts). Per
    pair: (record fields, usage of the calls that answered); a failed order makes the pair
    an error row. ``progress(done, total)`` is told of every pair whose both orders are in."""
    choices: list[list[PairChoice | JudgeError | None]] = [[None, None] for _ in pairs]
    jobs = iter([(i, order) for i in range(len(pairs)) for order in (0, 1)])
    done = 0

    async def worker() -> None:
        for i, order in jobs:  # one shared iterator: each job is taken exactly once
            p = pairs[i]
            shown = (p.answer_a, p.answer_b) if order == 0 else (p.answer_b, p.answer_a)
            try:
                choices[i][order] = await judge.compare_pair(p.query, "", *shown)
            except JudgeError as err:
                choices[i][order] = err
            if choices[i][1 - order] is not None and progress is not None:
                nonlocal done
                done += 1
                progress(done, len(pairs))

    await asyncio.gather(*(worker() for _ in range(max(1, min(concurrency, 2 * len(pairs))))))
    out: list[tuple[dict[str, Any], Usage]] = []
    for first, second in choices:
        usage = sum((c.usage for c in (first, second) if isinstance(c, PairChoice)), Usage())
        if isinstance(first, PairChoice) and isinstance(second, PairChoice):
            out.append((_verdict(first, second), usage))
        else:
            failed = second if isinstance(first, PairChoice) else first
            out.append(({"error": f"judge {judge.name} failed: {failed}"}, usage))
    return out


PROMPT_OVERHEAD_TOKENS = 300
"""Instructions and JSON scaffolding of one pairwise prompt."""
JUDGE_OUTPUT_TOKENS = 120
"""A reason and a choice."""


@dataclass(frozen=True)
class PairEstimate:
    """What comparing two runs will cost, before any call (laid out like ``run --estimate``)."""

    pairs: int
    calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    seconds: float = 0.0
    notes: tuple[str, ...] = ()

    def render(self) -> str:
        """Lines for the terminal."""
        minutes, secs = divmod(round(self.seconds), 60)
        lines = [
            f"pairs:         {self.pairs}",
            f"judge calls:   {self.calls} (both orders of every pair)",
            f"tokens:        {self.input_tokens} in, {self.output_tokens} out",
            f"cost:          ${self.cost_usd:.4f}",
            f"time:          about {minutes}m{secs:02d}s",
        ]
        return "\n".join([*lines, *(f"note: {n}" for n in self.notes)])

    def line(self) -> str:
        """One line for the start of a comparison."""
        minutes, secs = divmod(round(self.seconds), 60)
        return (
            f"estimate: {self.calls} judge calls, {self.input_tokens} tokens in, "
            f"{self.output_tokens} out, ${self.cost_usd:.4f}, about {minutes}m{secs:02d}s"
        )


LOCAL_PAIRS_PER_SECOND = 2000.0
"""Assumed speed of the local rule (it compares stored scores, nothing else)."""


def estimate_pairs(
    pairs: Sequence[Pair], judge: str, concurrency: int = DEFAULT_CONCURRENCY
) -> PairEstimate:
    """Two calls per pair with an LLM judge (none with ``local``), tokens estimated as
    characters / 4, priced by the packaged price table ((0, 0) when the model is unknown),
    time as ``run --estimate`` assumes it (``LLM_SECONDS_PER_CALL`` per call, ``concurrency``
    calls at once)."""
    from engine.run.estimate import LLM_SECONDS_PER_CALL

    if judge.strip() == "local" or ":" not in judge:
        return PairEstimate(
            len(pairs), 0, 0, 0, 0.0, len(pairs) / LOCAL_PAIRS_PER_SECOND,
            ("local judge: the rule over stored scores, no judge API calls, no judge cost",),
        )  # fmt: skip
    from engine.pricing import PriceTable

    chars = sum(len(p.query) + len(p.answer_a) + len(p.answer_b) for p in pairs)
    sent = 2 * (len(pairs) * PROMPT_OVERHEAD_TOKENS + chars // 4)
    received = 2 * len(pairs) * JUDGE_OUTPUT_TOKENS
    known = PriceTable().prices(judge.split(":", 1)[1])
    price_in, price_out = known or (0.0, 0.0)
    cost = (sent * price_in + received * price_out) / 1e6
    calls = 2 * len(pairs)
    notes = [
        f"time assumed: {LLM_SECONDS_PER_CALL:g} s per call, {concurrency} calls at once",
        "tokens estimated as characters / 4 plus the prompt; cached replies cost nothing",
    ]
    if known is None:
        notes.append(f"no price known for {judge}: judge cost counted as 0")
    seconds = calls * LLM_SECONDS_PER_CALL / max(1, concurrency)
    return PairEstimate(len(pairs), calls, sent, received, cost, seconds, tuple(notes))


def new_comparison_id(now: datetime) -> str:
    """``cmp-<UTC time>-<6 hex>``: sortable by time, unique."""
    return f"cmp-{now:%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}"


async def compare_pairs(
    pairs: Sequence[Pair],
    judge: PairJudge | None,
    *,
    run_a: str,
    run_b: str,
    comparison_id: str,
    now: datetime,
    margin: float = DEFAULT_MARGIN,
    concurrency: int = DEFAULT_CONCURRENCY,
    progress: Progress | None = None,
) -> tuple[list[PairwiseRecord], Usage]:
    """Judge every pair (``judge`` None: the local rule); a failed pair is a row with an
    error. ``concurrency`` judge calls are kept in flight (the HTTP judge's own client
    limits them too); ``progress(done, total)`` follows the pairs judged."""
    common = {"comparison_id": comparison_id, "run_a": run_a, "run_b": run_b, "compared_at": now}
    records: list[PairwiseRecord] = []
    usage = Usage()
    if judge is None:
        for p in pairs:
            winner, qa, qb, reason = local_judgment(p, margin)
            records.append(
                PairwiseRecord(
                    **common, **_key(p), winner=winner, consistent=True, a_first=winner,
                    b_first=winner, score_a=qa, score_b=qb, reason=reason, judge="local",
                )
            )  # fmt: skip
        if progress is not None:
            progress(len(pairs), len(pairs))
        return records, usage
    found = await judge_both_orders(pairs, judge, concurrency, progress)
    for p, (fields, used) in zip(pairs, found, strict=True):
        usage = usage + used
        records.append(
            PairwiseRecord(
                **common, **_key(p), **fields, judge=judge.name, input_tokens=used.input_tokens,
                output_tokens=used.output_tokens, cost_usd=used.cost_usd,
            )
        )  # fmt: skip
    return records, usage


def _key(p: Pair) -> dict[str, Any]:
    return {
        "iteration": p.iteration,
        "sample_id": p.sample_id,
        "candidate": p.candidate,
        "candidate_b": p.candidate_b,
        "domain": p.domain,
    }


def write_comparison(lake: Path, records: Sequence[PairwiseRecord]) -> Path | None:
    """Publish the records as one part of ``pairwise`` (atomic, like every lake part)."""
    if not records:
        return None
    return write_part(lake, "pairwise", records[0].comparison_id, 0, records)


# --------------------------------------------------------------------------- summary


@dataclass(frozen=True)
class Tally:
    """Win/tie/loss of run A against run B in one domain (or ``(all)``)."""

    domain: str
    wins_a: int
    ties: int
    wins_b: int
    inconsistent: int
    errors: int

    @property
    def judged(self) -> int:
        """Pairs with a winner (errors excluded)."""
        return self.wins_a + self.ties + self.wins_b

    @property
    def a_interval(self) -> tuple[float, float]:
        """Wilson 95% interval of A's win rate (ties count as not won)."""
        return wilson(self.wins_a, self.judged)


def tally(records: Sequence[PairwiseRecord]) -> list[Tally]:
    """One ``Tally`` per domain (sorted), then ``(all)``."""
    groups: dict[str, list[PairwiseRecord]] = {}
    for r in records:
        groups.setdefault(r.domain or "(none)", []).append(r)
    groups_all = [*sorted(groups.items()), ("(all)", list(records))]
    return [
        Tally(
            domain=name,
            wins_a=sum(r.winner == "a" for r in rows),
            ties=sum(r.winner == "tie" for r in rows),
            wins_b=sum(r.winner == "b" for r in rows),
            inconsistent=sum(r.consistent is False for r in rows),
            errors=sum(r.winner is None for r in rows),
        )
        for name, rows in groups_all
    ]
