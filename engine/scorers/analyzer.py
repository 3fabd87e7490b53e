"""The response analyzer as a scorer: accuracy, completeness, attribution, claims, highlights.

The analyzer is CPU-bound and synchronous, and embeds best in batches, so this scorer
queues samples and scores them in a worker thread, or in the run's worker processes, in
batches of up to ``ANALYZE_BATCH`` (``engine.scorers.batching``): samples that are ready at
the same moment share one embedding pass, and the event loop is never blocked.
"""

from __future__ import annotations

from typing import Any

from engine.models import ANALYZER_METRICS, SampleKey, TestCase
from engine.scorers.base import (
    BaseScorer,
    SampleInput,
    ScoreOutcome,
    ScorerContext,
    ScorerError,
    ScorerFactory as Factory,
)
from engine.scorers.batching import BatchPool, BatchWorker
from engine.scorers.parts import BatchAnalyzer
from engine.scorers.registry import register
from engine.scoring.analyzer import AnalysisError
from engine.scoring.plan import has_reference

ANALYZE_BATCH = 16
"""Most samples handed to the analyzer thread at once."""


ANALYZER_FIELDS = frozenset(
    {
        *ANALYZER_METRICS,
        *(f"{metric}_tier" for metric in ANALYZER_METRICS),
        "accuracy_similarity",
        "coverage_percent",
        "abstained",
    }
)
"""The ``results`` fields the analyzer fills."""


class AnalyzerScorer(BaseScorer):
    """Scores samples with a batch analyzer, in batches, in a worker thread."""

    name = "analyzer"
    provides = ANALYZER_FIELDS
    tables = frozenset({"claims", "highlights", "attributions"})

    def __init__(
        self,
        analyzer: BatchAnalyzer,
        batch: int = ANALYZE_BATCH,
        pool: BatchPool | None = None,
        *,
        require_reference: bool = True,
    ) -> None:
        self._analyzer = analyzer
        self._require_reference = require_reference
        self._worker: BatchWorker[tuple[SampleKey, TestCase, str], ScoreOutcome] = BatchWorker(
            self.score_batch, batch, pool=pool, kind=self.name, sample_of=_sample_of
        )

    async def score(self, sample: SampleInput) -> ScoreOutcome:
        """Queue the sample for the next batch and wait for its analysis."""
        if not self._require_reference and not has_reference(sample.case):
            return ScoreOutcome(flags=("no_reference",))
        outcome = await self._worker.submit((sample.key, sample.case, sample.response))
        if isinstance(outcome, ScorerError):
            raise outcome
        if isinstance(outcome, AnalysisError):
            raise ScorerError(str(outcome) or "the sample cannot be analyzed")
        if isinstance(outcome, BaseException):
            raise ScorerError(f"{type(outcome).__name__}: {outcome}")
        return outcome

    async def aclose(self) -> None:
        """Stop the batching task."""
        await self._worker.aclose()

    def score_batch(
        self, items: list[tuple[SampleKey, TestCase, str]]
    ) -> list[ScoreOutcome | BaseException]:
        """Analyze a batch and build its records (in the worker thread or process: the
        records are pydantic models, and building them is CPU work too)."""
        analyses = list(self._analyzer.analyze_batch([(case, text) for _, case, text in items]))
        if len(analyses) != len(items):
            raise AnalysisError(f"analyzer returned {len(analyses)} results for {len(items)}")
        out: list[ScoreOutcome | BaseException] = []
        for (key, _, _), analysis in zip(items, analyses, strict=True):
            if isinstance(analysis, AnalysisError):
                out.append(ScorerError(str(analysis) or "the sample cannot be analyzed"))
            elif isinstance(analysis, BaseException):
                out.append(analysis)
            else:
                out.append(_outcome(key, analysis))
        return out


def _sample_of(item: tuple[SampleKey, TestCase, str]) -> tuple[str, str]:
    _, case, text = item
    return case.id, text


def _outcome(key: SampleKey, analysis: Any) -> ScoreOutcome:
    fields = analysis.result_fields()
    flags = tuple(str(f) for f in fields.pop("flags", None) or ())
    return ScoreOutcome(
        fields=fields,
        records={
            "claims": list(analysis.claim_records(key)),
            "highlights": list(analysis.highlight_records(key)),
            "attributions": list(analysis.attribution_records(key)),
        },
        flags=flags,
    )


def _build(context: ScorerContext) -> AnalyzerScorer:
    return AnalyzerScorer(
        context.parts.analyzer,
        pool=context.parts.pool,
        require_reference=context.config.analyzer.require_reference,
    )


register(Factory("analyzer", _build))
