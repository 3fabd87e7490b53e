"""The response analyzer as a scorer: accuracy, completeness, attribution, claims, highlights.

The analyzer is CPU-bound and synchronous, and embeds best in batches, so this scorer
queues samples and scores them from one worker thread in batches of up to
``ANALYZE_BATCH``: samples that are ready at the same moment share one embedding pass, and
the event loop is never blocked.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any, Protocol

from engine.models import TestCase
from engine.scorers.base import BaseScorer, SampleInput, ScoreOutcome, ScorerContext, ScorerError
from engine.scorers.base import ScorerFactory as Factory
from engine.scorers.registry import register
from engine.scoring.analyzer import AnalysisError

ANALYZE_BATCH = 16
"""Most samples handed to the analyzer thread at once."""


class BatchAnalyzer(Protocol):
    """What the scorer needs of ``engine.scoring.analyzer.ResponseAnalyzer``."""

    def analyze_batch(self, items: Sequence[tuple[TestCase, str]]) -> Sequence[Any]:
        """One analysis, or the ``AnalysisError`` of a sample it cannot score, per item."""
        ...


ANALYZER_FIELDS = frozenset(
    {
        "accuracy",
        "accuracy_tier",
        "completeness",
        "completeness_tier",
        "attribution",
        "attribution_tier",
        "coverage_percent",
        "abstained",
    }
)
"""The ``results`` fields the analyzer fills."""


class AnalyzerScorer(BaseScorer):
    """Scores samples with a batch analyzer run in one worker thread."""

    name = "analyzer"
    provides = ANALYZER_FIELDS
    tables = frozenset({"claims", "highlights", "attributions"})

    def __init__(self, analyzer: BatchAnalyzer, batch: int = ANALYZE_BATCH) -> None:
        self._analyzer = analyzer
        self._batch = batch
        self._queue: asyncio.Queue[tuple[TestCase, str, asyncio.Future[Any]]] | None = None
        self._task: asyncio.Task[None] | None = None

    async def score(self, sample: SampleInput) -> ScoreOutcome:
        """Queue the sample for the next batch and wait for its analysis."""
        if self._queue is None or self._task is None:
            self._queue = asyncio.Queue()
            self._task = asyncio.create_task(self._serve(self._queue))
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        await self._queue.put((sample.case, sample.response, future))
        analysis = await future
        if isinstance(analysis, AnalysisError):
            raise ScorerError(str(analysis) or "the sample cannot be analyzed")
        if isinstance(analysis, BaseException):
            raise ScorerError(f"{type(analysis).__name__}: {analysis}")
        fields = analysis.result_fields()
        flags = tuple(str(f) for f in fields.pop("flags", None) or ())
        key = sample.key
        return ScoreOutcome(
            fields=fields,
            records={
                "claims": list(analysis.claim_records(key)),
                "highlights": list(analysis.highlight_records(key)),
                "attributions": list(analysis.attribution_records(key)),
            },
            flags=flags,
        )

    async def aclose(self) -> None:
        """Stop the batching task."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = self._queue = None

    async def _serve(self, queue: asyncio.Queue[tuple[TestCase, str, asyncio.Future[Any]]]) -> None:
        while True:
            items = [await queue.get()]
            await asyncio.sleep(0)  # let samples that are ready join this batch
            while len(items) < self._batch and not queue.empty():
                items.append(queue.get_nowait())
            live = [item for item in items if not item[2].done()]
            if live:
                results = await self._analyze([(case, text) for case, text, _ in live])
                for (_, _, future), result in zip(live, results, strict=True):
                    if not future.done():
                        future.set_result(result)

    async def _analyze(self, pairs: list[tuple[TestCase, str]]) -> list[Any]:
        try:
            results = list(await asyncio.to_thread(self._analyzer.analyze_batch, pairs))
            if len(results) != len(pairs):
                raise AnalysisError(f"analyzer returned {len(results)} results for {len(pairs)}")
            return results
        except Exception:
            # Isolate the sample that broke the batch: the others still get scored.
            out: list[Any] = []
            for pair in pairs:
                try:
                    out.extend(await asyncio.to_thread(self._analyzer.analyze_batch, [pair]))
                except Exception as exc:
                    out.append(exc)
            return out


def _build(context: ScorerContext) -> AnalyzerScorer:
    return AnalyzerScorer(context.parts.analyzer)


register(Factory("analyzer", _build))
