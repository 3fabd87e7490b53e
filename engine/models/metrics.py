"""Every named metric and its scale: the one home of what a metric's numbers mean.

A metric name means one scale everywhere it is a column or a ``check`` metric: ``results``,
``iteration_metrics``, the views (``run_summary``, ``run_metrics``, ``grader_summary``,
``candidate_scores``...), ``evalhouse check`` and alert rules. Pages compare metrics of
different scales side by side in their 0-100 form (``Scale.to_100``; in SQL the view
``result_scores``, whose 0-100 columns carry the suffix ``_100`` so that no column there
reuses a metric's name on another scale). ``warehouse/README.md`` shows this table to
analysts; a test checks the two agree.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.models.base import ANALYZER_METRICS


@dataclass(frozen=True)
class Scale:
    """The range a metric's values lie in and the unit shown next to them."""

    name: str
    """How the scale is shown next to a threshold: ``0-100``, ``0-1``, ``1-5``, ``USD``."""
    low: float
    high: float | None
    """None: no upper bound (dollars, counts)."""
    meaning: str
    """What a value on it is, in a few words (the README's scale table)."""

    def contains(self, value: float) -> bool:
        """Whether ``value`` lies on the scale (bounds included)."""
        return self.low <= value and (self.high is None or value <= self.high)

    def to_100(self, value: float | bool) -> float:
        """``value`` in its 0-100 form, the one pages compare metrics in: 1-5 by
        (s - 1) x 25, 0-1 by x 100 (a pass as 0 or 100), 0-100 as it is."""
        if self.high is None:
            raise ValueError(f"a {self.name} value has no 0-100 form")
        return (float(value) - self.low) * 100.0 / (self.high - self.low)


PERCENT = Scale("0-100", 0.0, 100.0, "points out of 100")
RATE = Scale("0-1", 0.0, 1.0, "a share or ratio: 0.8 is 80%")
RUBRIC = Scale("1-5", 1.0, 5.0, "a judge's rubric score (4 passes)")
USD = Scale("USD", 0.0, None, "US dollars")
COUNT = Scale("count", 0.0, None, "a number of rows")


@dataclass(frozen=True)
class Metric:
    """A named metric: its human name, scale and the ``results`` column behind it."""

    name: str
    label: str
    scale: Scale
    column: str | None = None
    """The ``results`` column a per-sample value comes from (None: a run aggregate only)."""
    gated: bool = True
    """Whether ``evalhouse check`` (and alert rules) know it (query ``check_metrics``)."""


METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        *(Metric(a, a.capitalize(), PERCENT, a) for a in ANALYZER_METRICS),
        Metric("coverage_percent", "Coverage", PERCENT, "coverage_percent"),
        Metric("judge_faithfulness", "Judge faithfulness", RUBRIC, "judge_faithfulness"),
        Metric("judge_completeness", "Judge completeness", RUBRIC, "judge_completeness"),
        Metric("overall", "Judge overall", RUBRIC, "overall"),
        Metric("pass_rate", "Rubric pass rate", RATE, "passed"),
        # per iteration only (view run_metrics): a run's gate reads pass_rate
        Metric("faithfulness_pass_rate", "Faithfulness pass rate", RATE, gated=False),
        Metric("completeness_pass_rate", "Completeness pass rate", RATE, gated=False),
        Metric("claim_faithfulness", "Claim faithfulness", RATE, "claim_faithfulness"),
        Metric("rag_correctness", "RAG correctness", RUBRIC, "rag_correctness"),
        Metric("rag_faithfulness", "RAG faithfulness", RUBRIC, "rag_faithfulness"),
        Metric("rag_precision", "RAG precision", RUBRIC, "rag_precision"),
        Metric("rag_recall", "RAG recall", RUBRIC, "rag_recall"),
        Metric("rag_relevance", "RAG relevance", RUBRIC, "rag_relevance"),
        Metric("rag_overall", "RAG overall", RUBRIC, "rag_overall"),
        Metric("error_rate", "Error rate", RATE),
        Metric("samples", "Samples", COUNT),
        Metric("cost_usd", "Cost", USD, "cost_usd"),
    )
}
"""Every metric with a fixed name, by name."""

JUDGE_METRICS: tuple[str, ...] = (
    "judge_faithfulness",
    "judge_completeness",
    "pass_rate",
    "claim_faithfulness",
    "rag_correctness",
    "rag_faithfulness",
    "rag_precision",
    "rag_recall",
    "rag_relevance",
    "rag_overall",
)
"""The metrics a judge decides, in the order pages list them (after the analyzer's, which
the embedder scores)."""

GATE_METRICS: tuple[str, ...] = tuple(name for name, m in METRICS.items() if m.gated)
"""The fixed-name metrics ``evalhouse check`` gates (the query ``check_metrics`` gives each
a value, null when the run has none)."""

GRADER_PREFIX = "grader:"
"""A grader's score is the metric ``grader:<grader id>`` (0-1)."""
RETRIEVAL_PREFIX = "retrieval:"
"""A retrieval metric (view ``retrieval_scores``) is ``retrieval:<metric>`` (0-1), for
example ``retrieval:ndcg@5``."""
CONVERSATION_PREFIX = "conversation:"
"""A conversation metric (table ``conversation_scores``) is ``conversation:<metric>``."""

CONVERSATION_METRICS: tuple[str, ...] = (
    "expectation_mean",
    "expectation_pass_rate",
    "relevancy",
    "knowledge_retention",
    "completeness",
    "role_adherence",
)
"""The metrics of a conversation (0-1 each), in the order ``check`` lists them."""

TOOLS_PREFIX = "tools:"
"""A tool-call metric of an agent's trajectory (view ``tool_scores``) is ``tools:<metric>``."""

TOOL_METRICS: dict[str, Scale] = {
    "tool_precision": RATE,
    "tool_recall": RATE,
    "tool_f1": RATE,
    "argument_correctness": RATE,
    "order_exact": RATE,
    "order_subsequence": RATE,
    "redundant_calls": COUNT,
    "task_completion": RATE,
}
"""The metrics of a trajectory (``engine.scoring.tools``), in the order pages and ``check``
list them, with their scales (a per-sample mean is on the same scale)."""

TOOL_LABELS: dict[str, str] = {
    "tool_precision": "Tool precision",
    "tool_recall": "Tool recall",
    "tool_f1": "Tool F1",
    "argument_correctness": "Tool arguments",
    "order_exact": "Tool order (exact)",
    "order_subsequence": "Tool order (subsequence)",
    "redundant_calls": "Redundant tool calls",
    "task_completion": "Task completion",
}
"""The human name of each trajectory metric."""

PREFIX_SCALES: dict[str, Scale] = {
    GRADER_PREFIX: RATE,
    RETRIEVAL_PREFIX: RATE,
    CONVERSATION_PREFIX: RATE,
}
"""The scale of each family of metrics named ``<prefix><name>``."""

TO_100_SUFFIX = "_100"
"""A column holding a metric in its 0-100 form is named ``<metric>_100`` (view
``result_scores``), so no column reuses a metric's name on another scale."""


def scale_of(metric: str) -> Scale | None:
    """The scale of ``metric`` (a fixed name or a prefixed one), or None for a name that is
    not a metric (a conversation metric must be one of ``CONVERSATION_METRICS``)."""
    if metric in METRICS:
        return METRICS[metric].scale
    if metric.startswith(TOOLS_PREFIX):
        return TOOL_METRICS.get(metric.removeprefix(TOOLS_PREFIX))
    for prefix, scale in PREFIX_SCALES.items():
        rest = metric.removeprefix(prefix)
        if rest != metric and rest:
            if prefix == CONVERSATION_PREFIX and rest not in CONVERSATION_METRICS:
                return None
            return scale
    return None


def is_gate_metric(metric: str) -> bool:
    """Whether ``evalhouse check`` knows ``metric``: one of ``GATE_METRICS``, or a grader's,
    retrieval, conversation or tool-call metric."""
    if metric in METRICS:
        return METRICS[metric].gated
    return scale_of(metric) is not None


def gate_metric_names() -> str:
    """The metrics ``evalhouse check`` knows, as a usage error lists them."""
    return ", ".join(
        [
            *GATE_METRICS,
            f"{GRADER_PREFIX}<id>",
            f"{RETRIEVAL_PREFIX}<metric>",
            *(CONVERSATION_PREFIX + m for m in CONVERSATION_METRICS),
            *(TOOLS_PREFIX + m for m in TOOL_METRICS),
        ]
    )
