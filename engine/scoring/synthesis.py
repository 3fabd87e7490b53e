"""Answer synthesis evaluation (answer-synthesis-evaluation.md).

Two independent 1-5 scores from the judge, faithfulness (grounding in the context) and
completeness (does the answer explain why it fits); pass = both >= 4; overall = their mean.
Per iteration: means and pass rates, and the low-faithfulness analysis (counts and examples
per failure category plus a short deterministic insight text).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.judges.base import Judge, RubricResult

PASS_SCORE = 4.0
"""Both dimensions must reach this to pass."""


def passed(faithfulness: float, completeness: float) -> bool:
    """The spec's pass rule: both scores at least 4."""
    return faithfulness >= PASS_SCORE and completeness >= PASS_SCORE


def overall(faithfulness: float, completeness: float) -> float:
    """Mean of the two scores."""
    return (faithfulness + completeness) / 2


async def score_synthesis(
    judge: Judge, question: str, context: Sequence[str], answer: str
) -> RubricResult:
    """The judge's rubric for one answer (the judge is injected, never built here)."""
    return await judge.score_rubric(question, context, answer)


@dataclass(frozen=True)
class SynthesisOutcome:
    """One sample's rubric result, as the per-iteration metrics need it."""

    sample_id: str
    question: str
    faithfulness: float | None
    """None when the sample failed (error row) or gave no answer (empty or abstained)."""
    completeness: float | None
    """None when the sample failed (error row): left out of every mean and rate."""
    faithfulness_reasoning: str = ""
    completeness_reasoning: str = ""

    @property
    def scored(self) -> bool:
        """Both scores present."""
        return self.faithfulness is not None and self.completeness is not None


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def iteration_metrics(outcomes: Sequence[SynthesisOutcome]) -> dict[str, Any]:
    """Means and pass rates over the judged samples (None when nothing was judged).

    A judged sample has a completeness score; one without faithfulness gave no answer
    (empty or abstained): left out of the faithfulness and overall means, counted as not
    passed in every pass rate (the seed's denominator: all judged samples)."""
    judged = [o for o in outcomes if o.completeness is not None]
    scored = [o for o in judged if o.scored]
    f = [float(o.faithfulness) for o in scored if o.faithfulness is not None]
    c = [float(o.completeness) for o in judged if o.completeness is not None]
    both = [(float(o.faithfulness or 0), float(o.completeness or 0)) for o in scored]
    n = len(judged)
    return {
        "samples": len(outcomes),
        "scored": n,
        "judge_faithfulness_mean": _mean(f),
        "judge_completeness_mean": _mean(c),
        "faithfulness_pass_rate": sum(x >= PASS_SCORE for x in f) / n if n else None,
        "completeness_pass_rate": (
            sum(x >= PASS_SCORE for x, o in zip(c, judged, strict=True) if o.scored) / n
            if n
            else None
        ),
        "pass_rate": sum(passed(a, b) for a, b in both) / n if n else None,
        "overall_mean": _mean([overall(a, b) for a, b in both]),
    }


_CATEGORIES = (
    ("completely_false", "Completely false (faithfulness 1)", 1),
    ("mostly_false", "Mostly false (faithfulness 2)", 2),
    ("mixed", "Mixed (faithfulness 3)", 3),
)


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def low_faithfulness_analysis(
    outcomes: Sequence[SynthesisOutcome], *, max_examples: int = 3
) -> dict[str, Any]:
    """Failure patterns of one iteration, JSON-serialisable.

    ``categories`` holds, for faithfulness 1, 2 and 3 and for completeness failures (1-3),
    a count and up to ``max_examples`` examples (sample id, question, short reasoning);
    ``insight`` is a short text generated from the counts (deterministic).
    """
    scored = [o for o in outcomes if o.scored]
    categories: dict[str, Any] = {}
    for key, label, score in _CATEGORIES:
        hits = [o for o in scored if o.faithfulness is not None and round(o.faithfulness) == score]
        categories[key] = {
            "label": label,
            "count": len(hits),
            "examples": [
                {
                    "sample_id": o.sample_id,
                    "question": _short(o.question, 160),
                    "reasoning": _short(o.faithfulness_reasoning),
                }
                for o in hits[:max_examples]
            ],
        }
    failures = [o for o in scored if o.completeness is not None and o.completeness < PASS_SCORE]
    categories["completeness_failures"] = {
        "label": "Completeness failures (completeness 1-3)",
        "count": len(failures),
        "examples": [
            {
                "sample_id": o.sample_id,
                "question": _short(o.question, 160),
                "reasoning": _short(o.completeness_reasoning),
            }
            for o in failures[:max_examples]
        ],
    }
    return {
        "samples": len(outcomes),
        "scored": len(scored),
        "categories": categories,
        "insight": _insight(len(scored), categories),
    }


def _insight(n: int, categories: dict[str, Any]) -> str:
    if n == 0:
        return "No scored samples in this iteration."
    counts = {k: int(v["count"]) for k, v in categories.items()}
    low = counts["completely_false"] + counts["mostly_false"] + counts["mixed"]
    parts: list[str] = []
    if low == 0:
        parts.append(f"All {n} scored answers reached faithfulness 4 or more.")
    else:
        parts.append(
            f"{low} of {n} answers ({low / n:.0%}) scored faithfulness 3 or below: "
            f"{counts['completely_false']} completely false, {counts['mostly_false']} mostly "
            f"false, {counts['mixed']} mixed."
        )
        worst = max(("completely_false", "mostly_false", "mixed"), key=lambda k: (counts[k], k))
        advice = {
            "completely_false": "Most failures contradict the context or ignore it: check that "
            "retrieval returns the right passages and that the prompt forbids outside knowledge.",
            "mostly_false": "Most failures carry major unsupported claims: instruct the model to "
            "state only what the context says and to say so when it does not know.",
            "mixed": "Most failures blend supported facts with additions: ask the model to cite "
            "the passage behind each statement and to drop what it cannot cite.",
        }
        parts.append(advice[worst])
    failures = counts["completeness_failures"]
    if failures:
        parts.append(
            f"{failures} of {n} answers ({failures / n:.0%}) failed completeness: they list facts "
            "without explaining why they fit the question; ask for the reason behind each item."
        )
    else:
        parts.append("Every scored answer explains why it fits the question (completeness >= 4).")
    return " ".join(parts)
