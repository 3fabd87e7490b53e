"""Tool-call metrics as a scorer: an agent's recorded trajectory (``tools_called``) against
the case's ``expected_tools``, into ``sample_scores`` (view ``tool_scores``).

Rows, all with scorer ``tools``: one per metric of ``engine.models.metrics.TOOL_METRICS``
(order metrics only when the case says order matters, task completion only when the case has
a reference answer), and one per expected call, metric ``call:<n>`` (n from 1), label the
tool's name, value 1 (made with the right arguments), 0 (wrong arguments) or null (never
made), reason what was wrong (the Sample page's trajectory table). A case without
``expected_tools`` gets no row.

Task completion, on the local path: the expected calls were all made with the right
arguments (in order when it matters), and the answer is supported by the reference: the
analyzer's accuracy, which credits the reference claims the answer states and is capped
below fair when it contradicts one, reaches the good tier and the answer did not abstain.

Only the recorded lane's responses are scored: the trajectory is the recorded agent's, and
a target or candidate that generates a new answer reports no tool calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.models import SampleScoreRecord, TestCase
from engine.models.metrics import TOOL_METRICS
from engine.scorers.base import BaseScorer, SampleInput, ScoreOutcome, ScorerContext, ScorerFactory
from engine.scorers.registry import register
from engine.scoring.plan import has_reference
from engine.scoring.tools import ToolMetrics, shown, tool_metrics

NAME = "tools"
"""``sample_scores.scorer`` of every row this scorer writes."""

CALL_METRIC_PREFIX = "call:"
"""The row of the n-th expected call is metric ``call:<n>``."""

SUPPORTED_TIERS = frozenset({"excellent", "good"})
"""Accuracy tiers that count as an answer the reference supports."""


def task_completion(
    case: TestCase, metrics: ToolMetrics, values: Mapping[str, Any]
) -> tuple[float | None, str]:
    """1 or 0 with why; null when the case has no reference to read the answer against."""
    if not has_reference(case):
        return None, "no reference answer to check the final answer against"
    if not metrics.tools_correct:
        wrong = [c for c in metrics.checks if not c.correct]
        if wrong:
            first = wrong[0]
            why = "never called" if first.call is None else first.problems[0]
            return 0.0, f"expected call {first.position + 1} ({first.expected.name}): {why}"
        return 0.0, "the expected calls were made out of order"
    if values.get("abstained"):
        return 0.0, "the final answer declines or does not know"
    tier = values.get("accuracy_tier")
    if tier not in SUPPORTED_TIERS:
        return 0.0, f"the final answer is not supported by the reference (accuracy tier {tier})"
    return 1.0, f"every expected call right and the answer supported (accuracy tier {tier})"


def _reasons(metrics: ToolMetrics) -> dict[str, str]:
    names = ", ".join(c.name for c in metrics.called) or "no tool"
    expected = ", ".join(c.expected.name for c in metrics.checks) or "no tool"
    return {
        "tool_precision": f"called: {names}",
        "tool_recall": f"expected: {expected}",
        "tool_f1": "harmonic mean of tool precision and recall",
        "argument_correctness": f"{sum(c.correct for c in metrics.checks)} of "
        f"{len(metrics.checks)} expected calls with the right arguments",
        "order_exact": "the tools called are exactly the expected ones, in order",
        "order_subsequence": "the expected tools are called in order, others in between",
        "redundant_calls": "calls matched to no expected call",
    }


def tool_rows(sample: SampleInput) -> list[SampleScoreRecord]:
    """The rows of one sample (none when its case has no ``expected_tools``)."""
    case = sample.case
    if case.expected_tools is None:
        return []
    metrics = tool_metrics(
        case.expected_tools, case.tools_called, ordered=case.expected_tools_ordered
    )
    completion, completion_reason = task_completion(case, metrics, sample.values)
    values: dict[str, float | None] = {
        "tool_precision": metrics.precision,
        "tool_recall": metrics.recall,
        "tool_f1": metrics.f1,
        "argument_correctness": metrics.argument_correctness,
        "order_exact": metrics.order_exact,
        "order_subsequence": metrics.order_subsequence,
        "redundant_calls": float(metrics.redundant_calls),
        "task_completion": completion,
    }
    reasons = {**_reasons(metrics), "task_completion": completion_reason}
    key = sample.key.model_dump()
    rows = [
        SampleScoreRecord(**key, scorer=NAME, metric=m, value=values[m], reason=reasons[m])
        for m in TOOL_METRICS
        if values[m] is not None or m == "task_completion"
    ]
    for check in metrics.checks:
        if check.call is None:
            value, reason = None, "never called"
        elif check.problems:
            value, reason = 0.0, "; ".join(check.problems)
        else:
            args = shown(check.call.arguments)
            value, reason = 1.0, f"called with {args}"
        rows.append(
            SampleScoreRecord(
                **key,
                scorer=NAME,
                metric=f"{CALL_METRIC_PREFIX}{check.position + 1}",
                value=value,
                label=check.expected.name,
                reason=reason,
            )
        )
    return rows


class ToolScorer(BaseScorer):
    """Tool selection, argument correctness, order, redundant calls and task completion of
    each case with ``expected_tools``."""

    name = NAME
    reads = frozenset({"accuracy_tier", "abstained"})
    tables = frozenset({"sample_scores"})

    async def score(self, sample: SampleInput) -> ScoreOutcome:
        """The sample's rows; pure CPU, microseconds per case."""
        if sample.key.candidate:
            return ScoreOutcome()
        return ScoreOutcome(records={"sample_scores": tool_rows(sample)})


def _build(context: ScorerContext) -> ToolScorer | None:
    return ToolScorer() if context.config.target == "recorded" else None


register(ScorerFactory(NAME, _build))
