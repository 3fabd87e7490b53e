"""RAG metrics (RAG white paper): correctness, faithfulness, precision, recall, relevance.

All on 1-5; ratios map by ``1 + 4x``. Edge cases follow the paper:
- faithfulness = supported facts / facts; no context -> 1.0 (5.0 scaled) with the warning
  "No context to verify";
- precision = retrieved chunks that support at least one fact of the answer / retrieved
  chunks; no context -> None (the paper's NaN). An answer with no facts ("indistinct") is
  replaced by the reference answer's facts;
- recall = facts of the answer the retrieved context states (a contradicted fact is not
  covered) / facts of the answer; reference facts when the answer has none; no context ->
  1.0 (5.0) as the paper says, with a warning;
- correctness (vs the reference) and relevance (vs the question) are judge scores 1-5;
- overall = weighted mean with ``RagWeights`` (default 0.4/0.2/0.2/0.2/0); metrics that are
  None are skipped and the remaining weights renormalised.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from engine.judges.base import ChunkUse, ClaimVerdict, Judge, MetricScore, Usage
from engine.models import RagWeights
from engine.scoring.faithfulness import batches, verdicts_for

NO_CONTEXT = "No context to verify"
DEFAULT_WEIGHTS = RagWeights()
"""The white paper's weights: 0.4/0.2/0.2/0.2/0."""


def scale(ratio: float) -> float:
    """A 0-1 ratio on the 1-5 scale: ``1 + 4 x``."""
    return 1.0 + 4.0 * ratio


def weighted_overall(
    scores: dict[str, float | None], weights: RagWeights = DEFAULT_WEIGHTS
) -> float | None:
    """Weighted mean of the metrics that are present; None if no weight is left."""
    total = 0.0
    weight_sum = 0.0
    for name, value in scores.items():
        weight = float(getattr(weights, name))
        if value is None or weight <= 0:
            continue
        total += weight * value
        weight_sum += weight
    return total / weight_sum if weight_sum > 0 else None


@dataclass(frozen=True)
class RagScores:
    """The five RAG metrics of one sample and their weighted overall."""

    correctness: float | None
    faithfulness: float | None
    precision: float | None
    recall: float | None
    relevance: float | None
    overall: float | None
    warnings: tuple[str, ...] = ()
    chunk_uses: tuple[ChunkUse, ...] = ()
    reasoning: str = ""
    usage: Usage = field(default_factory=Usage)

    def metric_scores(self) -> dict[str, float | None]:
        """The five metrics by ``RagWeights`` name, for ``weighted_overall``."""
        return {
            "correctness": self.correctness,
            "faithfulness": self.faithfulness,
            "precision": self.precision,
            "recall": self.recall,
            "relevance": self.relevance,
        }


def _grounding(
    context: Sequence[str],
    verdicts: Sequence[ClaimVerdict],
    recall_verdicts: Sequence[ClaimVerdict],
    warnings: list[str],
) -> tuple[float | None, float | None]:
    """Faithfulness (supported answer claims) and recall (reference claims the context
    covers), both on 1-5; without context both are 5 and a warning says why."""
    if not context:
        warnings.append(NO_CONTEXT)
        return scale(1.0), scale(1.0)
    faithfulness = scale(
        sum(v.verdict == "SUPPORTED" for v in verdicts) / len(verdicts) if verdicts else 1.0
    )
    if not recall_verdicts:
        return faithfulness, None
    # A contradicted fact is not covered: the context states something else, and an answer
    # the context wholly contradicts must not score full recall.
    covered = sum(v.verdict == "SUPPORTED" for v in recall_verdicts)
    return faithfulness, scale(covered / len(recall_verdicts))


def _reasoning(
    correctness: MetricScore | None, relevance: MetricScore, uses: Sequence[ChunkUse] | None
) -> str:
    parts = (
        f"correctness: {correctness.reasoning}" if correctness else "",
        f"relevance: {relevance.reasoning}",
        f"precision: {sum(u.used for u in uses)} of {len(uses)} chunks used" if uses else "",
    )
    return "; ".join(part for part in parts if part)


def cited_uses(verdicts: Sequence[ClaimVerdict], chunks: int) -> list[ChunkUse] | None:
    """Chunk use read from verdicts that name the passages stating their claim (a batched
    verification); None when a verdict does not say (then each chunk is asked)."""
    if any(v.passages is None for v in verdicts):
        return None
    stating: dict[int, list[int]] = {}
    for number, verdict in enumerate(verdicts, start=1):
        for index in verdict.passages or ():
            stating.setdefault(index, []).append(number)
    return [
        ChunkUse(used=True, reasoning=f"states statement {', '.join(map(str, stating[j]))}")
        if j in stating
        else ChunkUse(used=False, reasoning="states none of the statements")
        for j in range(chunks)
    ]


async def _chunk_uses(
    judge: Judge, basis: Sequence[str], context: Sequence[str]
) -> list[ChunkUse] | None:
    """One chunk-use call per chunk (``judge_calls=per_prompt`` and the local judge)."""
    if not context or not basis:
        return None
    return list(await asyncio.gather(*(judge.chunk_used(basis, c) for c in context)))


async def _recall_basis(
    judge: Judge, claims: Sequence[str], reference_claims: Sequence[str], context: Sequence[str]
) -> list[ClaimVerdict] | None:
    """Verdicts of the reference's claims when the answer has none; None when the answer's
    own verdicts are the basis."""
    if claims or not reference_claims:
        return None
    return await verdicts_for(judge, reference_claims, context)


async def evaluate_rag(
    judge: Judge,
    *,
    question: str,
    answer: str,
    reference: str,
    context: Sequence[str],
    claims: Sequence[str],
    verdicts: Sequence[ClaimVerdict],
    weights: RagWeights = DEFAULT_WEIGHTS,
) -> RagScores:
    """Score one sample. ``claims``/``verdicts`` are the answer's claims already verified
    against ``context`` (extracted once per sample by the caller)."""
    context = [c for c in context if c.strip()]
    warnings: list[str] = []
    usage = Usage()

    reference_claims: list[str] = []
    if not claims and reference.strip() and context:
        extracted = await judge.extract_claims(reference)
        usage = usage + extracted.usage
        reference_claims = [c.text for c in extracted.claims]

    async def correctness() -> MetricScore | None:
        if not reference.strip():
            return None
        return await judge.score_correctness(question, answer, reference)

    async def relevance() -> MetricScore:
        if not answer.strip():
            return MetricScore(score=1.0, reasoning="Empty answer.")
        return await judge.score_relevance(question, answer)

    async def grounding() -> tuple[list[ChunkUse] | None, list[ClaimVerdict] | None]:
        basis = list(claims) or reference_claims
        if batches(judge):
            # The batched verdicts name the chunks stating each claim: precision reads
            # them once the basis (the answer's claims or the reference's) is verified.
            recall = await _recall_basis(judge, claims, reference_claims, context)
            cited = cited_uses(verdicts if recall is None else recall, len(context))
            if cited is None:
                return await _chunk_uses(judge, basis, context), recall
            return (cited if context and basis else None), recall
        uses, recall = await asyncio.gather(
            _chunk_uses(judge, basis, context),
            _recall_basis(judge, claims, reference_claims, context),
        )
        return uses, recall

    correctness_r, relevance_r, (uses, recall_verdicts) = await asyncio.gather(
        correctness(), relevance(), grounding()
    )
    spent = [*(recall_verdicts or ()), *(uses or ()), relevance_r, *filter(None, [correctness_r])]
    usage = sum((part.usage for part in spent), usage)
    if recall_verdicts is None:
        recall_verdicts = list(verdicts)  # the answer's own, already paid for
    faithfulness, recall = _grounding(context, verdicts, recall_verdicts, warnings)
    precision_score = scale(sum(u.used for u in uses) / len(uses)) if uses is not None else None
    if correctness_r is None:
        warnings.append("No reference answer: correctness not scored")

    metrics = {
        "correctness": correctness_r.score if correctness_r else None,
        "faithfulness": faithfulness,
        "precision": precision_score,
        "recall": recall,
        "relevance": relevance_r.score,
    }
    return RagScores(
        overall=weighted_overall(metrics, weights),
        warnings=tuple(warnings),
        chunk_uses=tuple(uses or ()),
        reasoning=_reasoning(correctness_r, relevance_r, uses),
        usage=usage,
        **metrics,
    )
