"""The aggregates of one iteration: answer-synthesis metrics, means, tokens and cost."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from engine.clock import utcnow
from engine.models import ANALYZER_METRICS, IterationMetricsRecord
from engine.scoring.synthesis import (
    SynthesisOutcome,
    iteration_metrics as synthesis_iteration_metrics,
    low_faithfulness_analysis,
)
from engine.stats import t_interval_width

METRIC_COLUMNS = (
    "sample_id",
    "candidate",
    "query",
    "error",
    *ANALYZER_METRICS,
    "judge_faithfulness",
    "judge_completeness",
    "faithfulness_reasoning",
    "completeness_reasoning",
    "claim_faithfulness",
    "rag_overall",
    "input_tokens",
    "judge_input_tokens",
    "output_tokens",
    "judge_output_tokens",
    "cost_usd",
)
"""The result columns ``iteration_metrics`` reads: the runner reads only these back."""


def _mean(values: Sequence[float | None]) -> float | None:
    xs = [float(v) for v in values if v is not None and not math.isnan(v)]
    return math.fsum(xs) / len(xs) if xs else None


def synthesis_outcomes(rows: Sequence[Mapping[str, Any]]) -> list[SynthesisOutcome]:
    """Result rows as the answer-synthesis module's per-sample outcomes."""
    return [
        SynthesisOutcome(
            sample_id=str(r["sample_id"]),
            question=str(r.get("query") or ""),
            faithfulness=r.get("judge_faithfulness"),
            completeness=r.get("judge_completeness"),
            faithfulness_reasoning=r.get("faithfulness_reasoning") or "",
            completeness_reasoning=r.get("completeness_reasoning") or "",
        )
        for r in rows
    ]


def iteration_metrics(
    run_id: str,
    iteration: int,
    rows: Sequence[Mapping[str, Any]],
    finished_at: datetime | None = None,
    *,
    candidate: str = "",
) -> IterationMetricsRecord:
    """The answer-synthesis metrics of one iteration (of one candidate) from its result
    rows."""

    def col(name: str) -> list[Any]:
        return [r.get(name) for r in rows]

    outcomes = synthesis_outcomes(rows)
    judged = synthesis_iteration_metrics(outcomes)
    return IterationMetricsRecord(
        run_id=run_id,
        iteration=iteration,
        candidate=candidate,
        samples=len(rows),
        errors=sum(1 for r in rows if r.get("error") is not None),
        accuracy_mean=_mean(col("accuracy")),
        completeness_mean=_mean(col("completeness")),
        attribution_mean=_mean(col("attribution")),
        judge_faithfulness_mean=judged["judge_faithfulness_mean"],
        judge_completeness_mean=judged["judge_completeness_mean"],
        faithfulness_pass_rate=judged["faithfulness_pass_rate"],
        completeness_pass_rate=judged["completeness_pass_rate"],
        pass_rate=judged["pass_rate"],
        claim_faithfulness_mean=_mean(col("claim_faithfulness")),
        rag_overall_mean=_mean(col("rag_overall")),
        input_tokens=sum(
            int(r.get("input_tokens") or 0) + int(r.get("judge_input_tokens") or 0) for r in rows
        ),
        output_tokens=sum(
            int(r.get("output_tokens") or 0) + int(r.get("judge_output_tokens") or 0) for r in rows
        ),
        cost_usd=float(math.fsum(float(r.get("cost_usd") or 0.0) for r in rows)),
        low_faithfulness=json.dumps(
            low_faithfulness_analysis(outcomes), ensure_ascii=False, default=str
        ),
        finished_at=finished_at or utcnow(),
    )


def metrics_by_candidate(
    run_id: str, iteration: int, rows: Sequence[Mapping[str, Any]], finished_at: datetime
) -> list[IterationMetricsRecord]:
    """One metrics record per candidate of the iteration (one, for ``""``, when empty)."""
    by_candidate: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        by_candidate.setdefault(row.get("candidate") or "", []).append(row)
    return [
        iteration_metrics(run_id, iteration, own, finished_at, candidate=candidate)
        for candidate, own in sorted(by_candidate.items())
    ] or [iteration_metrics(run_id, iteration, [], finished_at)]


def ci_width(means: Sequence[float]) -> float | None:
    """Full width of the 95% t-interval of the mean of ``means`` (None below two values):
    2 * t(0.975, n - 1) * s / sqrt(n)."""
    return t_interval_width(means)


def iteration_means(rows: Sequence[Mapping[str, Any]], metric: str) -> dict[str, dict[int, float]]:
    """Mean of ``metric`` per candidate and iteration over the rows that have it
    (booleans count as 0/1; error rows and nulls are left out)."""
    sums: dict[str, dict[int, list[float]]] = {}
    for row in rows:
        value = row.get(metric)
        if value is None or not isinstance(value, int | float):
            continue
        per = sums.setdefault(str(row.get("candidate") or ""), {})
        per.setdefault(int(row["iteration"]), []).append(float(value))
    return {c: {i: sum(v) / len(v) for i, v in its.items()} for c, its in sums.items()}
