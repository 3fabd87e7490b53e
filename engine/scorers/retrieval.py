"""Retrieval metrics as a scorer: the ranking of a case's retrieved passages against its
ground truth, into ``sample_scores`` (the metrics are 0-1 ratios; pages show them x 100).

Rows, all with scorer ``retrieval``: one per metric (``mrr``, ``hit@k``, ``ndcg@k``,
``precision@k``, ``recall@k`` for each k of the run's ``retrieval_k``), and one per relevant
passage, metric ``rank:<passage id>``, whose value is the rank it was retrieved at (null:
not retrieved), label how it was matched and reason a sentence (the Sample page's rank
table). A case without a ranking or without ground truth gets no row at all: zeros would
read as a retriever that failed. Pure CPU and no call, except the run's embedder for cases
matched by text, which is asked only for passages that are not equal texts, off the event
loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from engine.embedders.base import Embedder, EmbedderError
from engine.models import SampleScoreRecord
from engine.scorers.base import (
    BaseScorer,
    SampleInput,
    ScoreOutcome,
    ScorerContext,
    ScorerError,
    ScorerFactory,
)
from engine.scorers.registry import register
from engine.scoring.retrieval import (
    RANK_METRIC_PREFIX,
    Found,
    RetrievalTask,
    Similarity,
    match_keys,
    match_texts,
    retrieval_metrics,
    retrieval_task,
)

NAME = "retrieval"
"""``sample_scores.scorer`` of every row this scorer writes."""


def _similarity(embedder: Embedder) -> Similarity:
    def cosine(left: Sequence[str], right: Sequence[str]) -> npt.NDArray[np.float32]:
        vectors = embedder.embed([*left, *right])  # rows are unit length: dot = cosine
        return vectors[: len(left)] @ vectors[len(left) :].T

    return cosine


def _reason(found: Found, task: RetrievalTask, threshold: float) -> str:
    if found.rank is None:
        return f"not among the {len(task.retrieved)} retrieved passages"
    name = task.retrieved_names[found.rank - 1]
    if found.how == "embedding":
        return f"rank {found.rank} ({name}), cosine {found.similarity:.2f} >= {threshold:g}"
    return f"rank {found.rank} ({name}), same {found.how}"


class RetrievalScorer(BaseScorer):
    """Hit@k, MRR, NDCG@k, precision@k and recall@k of each case that has a ranking and
    ground truth, plus the rank of each ground-truth passage."""

    name = NAME
    tables = frozenset({"sample_scores"})

    def __init__(self, ks: Sequence[int], embedder: Embedder | None, threshold: float) -> None:
        self.ks = tuple(ks)
        self.threshold = threshold
        self._similarity = _similarity(embedder) if embedder is not None else None

    def found(self, task: RetrievalTask) -> list[Found]:
        """Where each relevant passage of ``task`` was retrieved (may embed: call it off
        the event loop when the task is matched by text)."""
        if task.by != "text":
            return match_keys(task)
        return match_texts(task, self._similarity, self.threshold)

    def rows(self, sample: SampleInput) -> list[SampleScoreRecord]:
        """The rows of one sample (none without retrieval data)."""
        task = retrieval_task(sample.case)
        if task is None:
            return []
        return self.rows_of(sample, task, self.found(task))

    def rows_of(
        self, sample: SampleInput, task: RetrievalTask, found: Sequence[Found]
    ) -> list[SampleScoreRecord]:
        """Metric rows and rank rows of ``task`` given where its passages were found."""
        key = sample.key.model_dump()
        metrics = retrieval_metrics([f.rank for f in found], self.ks)
        matched = f"matched by {task.by}" + (
            f" (cosine >= {self.threshold:g})" if task.by == "text" else ""
        )
        rows = [
            SampleScoreRecord(**key, scorer=NAME, metric=metric, value=value, reason=matched)
            for metric, value in metrics.items()
        ]
        for name, where in zip(task.relevant_names, found, strict=True):
            rows.append(
                SampleScoreRecord(
                    **key,
                    scorer=NAME,
                    metric=f"{RANK_METRIC_PREFIX}{name}",
                    value=None if where.rank is None else float(where.rank),
                    label=where.how,
                    reason=_reason(where, task, self.threshold),
                )
            )
        return rows

    async def score(self, sample: SampleInput) -> ScoreOutcome:
        """The sample's rows; an embedder failure is the sample's error."""
        task = retrieval_task(sample.case)
        if task is None:
            return ScoreOutcome()
        try:
            if task.by == "text" and self._similarity is not None:
                found = await asyncio.to_thread(self.found, task)
            else:
                found = self.found(task)
        except EmbedderError as err:
            raise ScorerError(f"could not embed the passages to match: {err}") from err
        return ScoreOutcome(records={"sample_scores": self.rows_of(sample, task, found)})


def _build(context: ScorerContext) -> RetrievalScorer:
    config = context.config
    return RetrievalScorer(
        config.retrieval_k, context.parts.embedder, config.retrieval_match_threshold
    )


register(ScorerFactory(NAME, _build))
