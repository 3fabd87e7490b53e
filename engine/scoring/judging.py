"""Everything a judge scores for one sample, in one call: the interface of the runner.

``judge_sample`` extracts the response's claims ONCE and reuses their verdicts for claim
faithfulness, RAG faithfulness and RAG recall; the rubric, RAG correctness, relevance and
precision run concurrently. Judge errors propagate (the runner records an error row).

A response with no answer is flagged on the judge side too: ``empty_response`` or
``abstained`` (a refusal, deflection or "I don't know"). Faithfulness does not apply to
it: an answer that says nothing cannot be faithful or unfaithful, and scoring it 5.0 (the
vacuous case) let a system that refuses everything top the faithfulness means. So judge,
claim and RAG faithfulness and the overall are null for it (excluded from means; pages show
"no answer"), while completeness still counts it. It is not passed: a pass rate that left
refusals out would let a system that declines its hard questions look better (the
answer-synthesis seed counts them in the denominator), and the abstention rate is shown
beside it.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine.judges.base import ClaimsResult, Judge, Usage
from engine.judges.local.abstention import Abstention, detect_abstention
from engine.models import RagWeights, SampleKey, TestCase, VerdictRecord
from engine.scoring.faithfulness import ClaimCheck, claim_faithfulness
from engine.scoring.rag import DEFAULT_WEIGHTS, RagScores, evaluate_rag, weighted_overall
from engine.scoring.synthesis import overall, passed

LOW_CONFIDENCE = "low_confidence"
"""The review flag of a sample with a claim verdict below ``CONFIDENCE_BAR``."""

CONFIDENCE_BAR = 0.6
"""A verdict whose model is less sure than this is flagged ``low_confidence`` for review
(the view ``verdict_confidence`` counts the share decided at or above it). With the shipped
verifier it flags 4-9% of the demo's samples, and on the held-out sets the verdicts below it
are right far less often than the rest (docs/verifier.md); at 0.8 half the demo was flagged,
a queue nobody works through."""


@dataclass(frozen=True)
class JudgeOutcome:
    """The judge's scores for one sample, ready for a ResultRecord and VerdictRecords."""

    judge: str
    """Judge name (``local``, ``openai:gpt-4o-mini`` ...)."""
    judge_faithfulness: float | None
    """Rubric faithfulness 1-5; None when the response gives no answer."""
    judge_completeness: float
    judge_reasoning: str
    claim_faithfulness: float | None
    """Supported claims / claims in 0-1; None when the response gives no answer."""
    rag: RagScores
    checks: tuple[ClaimCheck, ...]
    usage: Usage = field(default_factory=Usage)
    """Tokens and cost of every judge call of the sample (cache hits cost nothing)."""
    warnings: tuple[str, ...] = ()
    faithfulness_reasoning: str = ""
    """The rubric's reasoning for faithfulness alone."""
    completeness_reasoning: str = ""
    """The rubric's reasoning for completeness alone."""
    flags: tuple[str, ...] = ()
    """Review flags of the judge side: ``empty_response``, ``abstained``."""

    @property
    def abstained(self) -> bool:
        """The response declines, deflects or says it does not know."""
        return "abstained" in self.flags

    @property
    def passed(self) -> bool | None:
        """Both rubric scores at least 4; False for an answer that says nothing."""
        if self.judge_faithfulness is None:
            return False
        return passed(self.judge_faithfulness, self.judge_completeness)

    @property
    def overall(self) -> float | None:
        """Mean of the rubric scores; None when faithfulness does not apply."""
        if self.judge_faithfulness is None:
            return None
        return overall(self.judge_faithfulness, self.judge_completeness)

    def result_fields(self) -> dict[str, Any]:
        """Keys exactly as ResultRecord fields (the judge cost is in ``usage``)."""
        return {
            "judge_faithfulness": self.judge_faithfulness,
            "judge_completeness": self.judge_completeness,
            "judge_reasoning": self.judge_reasoning,
            "faithfulness_reasoning": self.faithfulness_reasoning,
            "completeness_reasoning": self.completeness_reasoning,
            "passed": self.passed,
            "overall": self.overall,
            "claim_faithfulness": self.claim_faithfulness,
            "rag_correctness": self.rag.correctness,
            "rag_faithfulness": self.rag.faithfulness,
            "rag_precision": self.rag.precision,
            "rag_recall": self.rag.recall,
            "rag_relevance": self.rag.relevance,
            "rag_overall": self.rag.overall,
            "judge_input_tokens": self.usage.input_tokens,
            "judge_output_tokens": self.usage.output_tokens,
            "flags": list(self.flags),
            # Only a detected abstention is asserted: the analyzer's check also reads
            # embeddings, and a judge without them must not overrule it with False.
            **({"abstained": True} if self.abstained else {}),
        }

    def verdict_records(self, key: SampleKey) -> list[VerdictRecord]:
        """One VerdictRecord per claim of the response, in response order."""
        return [
            VerdictRecord(
                run_id=key.run_id,
                iteration=key.iteration,
                sample_id=key.sample_id,
                candidate=key.candidate,
                claim_index=i,
                claim_text=check.claim.text,
                verdict=check.verdict.verdict,
                evidence=check.verdict.evidence,
                similarity=check.verdict.similarity,
                rule=check.verdict.rule,
                confidence=check.verdict.confidence,
                response_start=check.claim.start,
                response_end=check.claim.end,
            )
            for i, check in enumerate(self.checks)
        ]


def reference_text(case: TestCase) -> str:
    """The reference answer: its text, else its claims joined."""
    if case.expected_answer.text.strip():
        return case.expected_answer.text
    return " ".join(c.text.rstrip(".") + "." for c in case.expected_answer.claims)


async def judge_sample(
    case: TestCase,
    response: str,
    judge: Judge,
    *,
    weights: RagWeights = DEFAULT_WEIGHTS,
) -> JudgeOutcome:
    """Rubric, claim faithfulness and RAG metrics of ``response`` to ``case``."""
    context = [c for c in case.effective_context if c.strip()]
    flags: tuple[str, ...] = ()
    if not response.strip():
        flags = ("empty_response",)
    elif _abstention(judge, response).abstained:
        flags = ("abstained",)
    claims = (
        ClaimsResult(claims=()) if "abstained" in flags else await judge.extract_claims(response)
    )
    faithfulness_task = claim_faithfulness(response, context, judge, claims=claims)
    rubric_task = judge.score_rubric(case.query, context, response)
    faith, rubric = await asyncio.gather(faithfulness_task, rubric_task)
    rag = await evaluate_rag(
        judge,
        question=case.query,
        answer=response,
        reference=reference_text(case),
        context=context,
        claims=[c.claim.text for c in faith.checks],
        verdicts=[c.verdict for c in faith.checks],
        weights=weights,
    )
    reasoning = (
        f"Faithfulness {rubric.faithfulness.score:g}: {rubric.faithfulness.reasoning}\n"
        f"Completeness {rubric.completeness.score:g}: {rubric.completeness.reasoning}\n"
        f"Claims: {faith.reasoning}"
    )
    sure = [c.verdict.confidence for c in faith.checks if c.verdict.confidence is not None]
    if any(confidence < CONFIDENCE_BAR for confidence in sure):
        flags = (*flags, LOW_CONFIDENCE)
    no_answer = "empty_response" in flags or "abstained" in flags
    if no_answer:
        rag = dataclasses.replace(
            rag,
            faithfulness=None,
            overall=weighted_overall({**rag.metric_scores(), "faithfulness": None}, weights),
        )
    return JudgeOutcome(
        judge=judge.name,
        judge_faithfulness=None if no_answer else rubric.faithfulness.score,
        judge_completeness=rubric.completeness.score,
        judge_reasoning=reasoning,
        claim_faithfulness=None if no_answer else faith.score,
        rag=rag,
        checks=faith.checks,
        usage=faith.usage + rubric.usage + rag.usage,
        warnings=rag.warnings,
        faithfulness_reasoning=rubric.faithfulness.reasoning,
        completeness_reasoning=rubric.completeness.reasoning,
        flags=flags,
    )


def _abstention(judge: Judge, response: str) -> Abstention:
    """The judge's own abstention check when it has one (the local judge adds embedding
    prototypes to the rules), else the rules alone."""
    own: Callable[[str], Abstention] | None = getattr(judge, "abstention", None)
    return own(response) if callable(own) else detect_abstention(response)
