"""The judge seam (after the faithfulness DDR): extract claims, verify one, score a rubric.

Judges are injected into evaluators, never constructed inside them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from pydantic import Field

from engine.models import Frozen, Verdict


class JudgeError(Exception):
    """A judge call failed (transport, quota, or after retries)."""


class JudgeGaveUp(JudgeError):
    """A judge call that failed after its client's own retries: retrying the sample would
    only repeat them."""


class JudgeResponseError(JudgeError):
    """The judge answered, but not in the expected shape (bad JSON, invalid verdict)."""


class Usage(Frozen):
    """Tokens and cost of judge calls."""

    input_tokens: int = 0
    """Tokens sent."""
    output_tokens: int = 0
    """Tokens received."""
    cost_usd: float = 0.0
    """Cost in US dollars."""
    calls: int = 0
    """Calls made (cache hits excluded)."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
            calls=self.calls + other.calls,
        )


class ExtractedClaim(Frozen):
    """A claim taken from a response."""

    text: str
    """The claim."""
    start: int | None = None
    """Start offset in the response when the claim is a verbatim span."""
    end: int | None = None
    """End offset (exclusive) in the response."""


class ClaimsResult(Frozen):
    """Claims extracted from a response."""

    claims: tuple[ExtractedClaim, ...]
    """The claims, in response order."""
    usage: Usage = Usage()
    """What the extraction cost."""


class ClaimVerdict(Frozen):
    """A judge's verdict on one claim."""

    verdict: Verdict
    """SUPPORTED, CONTRADICTED or NOT_ENOUGH_INFO."""
    evidence: str = ""
    """Context text or explanation behind the verdict."""
    similarity: float | None = None
    """Best claim-context cosine (local judge)."""
    rule: str | None = None
    """Contradiction rule that fired (local judge)."""
    passages: tuple[int, ...] | None = None
    """0-based indices of the context passages that on their own state the claim, when the
    judge said (a batched verification does; RAG precision then needs no call of its own)."""
    usage: Usage = Usage()
    """What the verification cost."""
    confidence: float | None = None
    """The probability the verdict is right, as the deciding model gives it (a verifier's
    class probability, the local combiner's support probability); None when the verdict
    came from a rule or a judge that gives none."""


class RubricScore(Frozen):
    """A 1-5 score with its reasoning."""

    score: float
    """1-5."""
    reasoning: str = ""
    """Why."""


class RubricResult(Frozen):
    """The two-dimension answer-synthesis rubric."""

    faithfulness: RubricScore
    """Grounding in the context."""
    completeness: RubricScore
    """Explanatory adequacy."""
    usage: Usage = Usage()
    """What the scoring cost."""


class MetricScore(Frozen):
    """One 1-5 score (RAG correctness or relevance) with its reasoning and cost."""

    score: float
    """1-5."""
    reasoning: str = ""
    """Why."""
    usage: Usage = Usage()
    """What the scoring cost."""


class RubricVerdict(Frozen):
    """A judge's grade of one output against one free rubric (grader files)."""

    score: float = Field(ge=0.0, le=1.0)
    """0-1, as the grader files of the eval-harness write-up ask."""
    reason: str = ""
    """The judge's brief explanation."""
    usage: Usage = Usage()
    """What the call cost."""


class ChunkUse(Frozen):
    """Whether a retrieved chunk holds information the answer uses (RAG precision)."""

    used: bool
    """True when the chunk supports at least one of the claims."""
    reasoning: str = ""
    """Why (the supported claim, or the judge's explanation)."""
    usage: Usage = Usage()
    """What the check cost."""


@runtime_checkable
class BatchVerifier(Protocol):
    """A judge that can verify all of a sample's claims in one call (``batches_claims``)."""

    @property
    def batches_claims(self) -> bool:
        """Whether ``verify_claims`` should be used instead of one ``verify_claim`` per claim."""
        ...

    async def verify_claims(
        self, claims: Sequence[str], context: Sequence[str]
    ) -> list[ClaimVerdict]:
        """One verdict per claim, in order, each naming the passages that state it."""
        ...


@runtime_checkable
class Judge(Protocol):
    """What every judge can do. HTTP judges are LLMs; the local judge is deterministic."""

    @property
    def name(self) -> str:
        """Recorded with every run: ``local``, ``openai:gpt-4o-mini``, ..."""
        ...

    @property
    def prompt_version(self) -> str:
        """Version of the prompts (or of the local rules) behind every score, stored with runs."""
        ...

    async def extract_claims(self, response: str) -> ClaimsResult:
        """Split a response into atomic factual claims."""
        ...

    async def verify_claim(self, claim: str, context: Sequence[str]) -> ClaimVerdict:
        """Check one claim against the context."""
        ...

    async def score_rubric(
        self, question: str, context: Sequence[str], answer: str
    ) -> RubricResult:
        """Faithfulness and completeness 1-5 with reasoning."""
        ...

    async def score_correctness(self, question: str, answer: str, reference: str) -> MetricScore:
        """RAG correctness 1-5: factual alignment of the answer with the reference answer."""
        ...

    async def score_relevance(self, question: str, answer: str) -> MetricScore:
        """RAG relevance 1-5: does the answer address the intent of the question."""
        ...

    async def chunk_used(self, claims: Sequence[str], chunk: str) -> ChunkUse:
        """RAG precision: does this retrieved chunk support at least one of the claims."""
        ...
