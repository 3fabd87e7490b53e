"""Preference pairs for DPO from what evalhouse already knows about which answer is better.

Two sources, both kept with who decided: head-to-head judgments (``evalhouse compare-runs``)
that named a winner the same way with either answer shown first (a pair judged differently
in the two orders is position bias, not a preference, and is left out; so are ties), and
people's reviews, where two answers to one question got different labels. The lines are
what TRL's ``DPOTrainer`` reads (``prompt``, ``chosen``, ``rejected``, plain text), plus
``margin`` (0-1: the local rule's quality difference / 100, the reviewers' grade
difference; null for an LLM judge, whose verdict has no degree), ``source`` (the judge,
or ``reviewer:NAMES``) and where each pair came from.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class PreferencePair:
    """One DPO example and its provenance."""

    prompt: str
    chosen: str
    rejected: str
    margin: float | None
    source: str
    """The judge (``local``, ``openai:gpt-4o``...) or ``reviewer:NAME[, NAME]``."""
    origin: str
    """``pairwise`` or ``review``."""
    sample_id: str
    chosen_run: str
    rejected_run: str
    comparison_id: str | None = None


def from_pairwise(row: Mapping[str, Any]) -> PreferencePair:
    """The pair of one decided, position-consistent judgment (a row of
    ``preference_pairwise``)."""
    a_won = row["winner"] == "a"
    score_a, score_b = row.get("score_a"), row.get("score_b")
    margin = None
    if isinstance(score_a, int | float) and isinstance(score_b, int | float):
        margin = round(abs(float(score_a) - float(score_b)) / 100.0, 4)
    return PreferencePair(
        prompt=str(row["query"]),
        chosen=str(row["response_a"] if a_won else row["response_b"]),
        rejected=str(row["response_b"] if a_won else row["response_a"]),
        margin=margin,
        source=str(row["judge"]),
        origin="pairwise",
        sample_id=str(row["sample_id"]),
        chosen_run=str(row["run_a"] if a_won else row["run_b"]),
        rejected_run=str(row["run_b"] if a_won else row["run_a"]),
        comparison_id=str(row["comparison_id"]),
    )


def from_review(row: Mapping[str, Any]) -> PreferencePair:
    """The pair of two reviewed answers (a row of ``preference_reviews``)."""
    names = sorted({*str(row["chosen_by"]).split(", "), *str(row["rejected_by"]).split(", ")})
    return PreferencePair(
        prompt=str(row["query"]),
        chosen=str(row["chosen"]),
        rejected=str(row["rejected"]),
        margin=round(float(row["margin"]), 4),
        source="reviewer:" + ", ".join(n for n in names if n),
        origin="review",
        sample_id=str(row["sample_id"]),
        chosen_run=str(row["chosen_run"]),
        rejected_run=str(row["rejected_run"]),
    )


def preference_pairs(
    pairwise_rows: Iterable[Mapping[str, Any]], review_rows: Iterable[Mapping[str, Any]]
) -> list[PreferencePair]:
    """Every pair, judgments first; the same (prompt, chosen, rejected) once (the first
    source that gave it), and never a pair and its reverse (two sources that disagree
    leave the example out: it would teach both ways)."""
    found = [from_pairwise(r) for r in pairwise_rows] + [from_review(r) for r in review_rows]
    keys = {(p.prompt, p.chosen, p.rejected) for p in found}
    out: list[PreferencePair] = []
    seen: set[tuple[str, str, str]] = set()
    for pair in found:
        key = (pair.prompt, pair.chosen, pair.rejected)
        if key in seen or (pair.prompt, pair.rejected, pair.chosen) in keys:
            continue
        seen.add(key)
        out.append(pair)
    return out


def dpo_jsonl(pairs: Iterable[PreferencePair]) -> str:
    """One JSON object per line, ``prompt``/``chosen``/``rejected`` first."""
    return "".join(json.dumps(asdict(p), ensure_ascii=False) + "\n" for p in pairs)
