"""The LLM judge over HTTP: claims, verdicts, rubric and RAG metrics, plus the grader-file
calls (``graded``) and the conversation calls (``conversational``), all through one
``HttpJudgeClient``; the wire format decides the provider.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from engine.judges.base import (
    ChunkUse,
    ClaimsResult,
    ClaimVerdict,
    ExtractedClaim,
    MetricScore,
    RubricResult,
)
from engine.judges.http.batched import verify_in_batches
from engine.judges.http.client import HttpJudgeClient
from engine.judges.http.conversational import CONVERSATION_PROMPTS, ConversationCalls
from engine.judges.http.graded import GRADED_PROMPTS, GradedCalls
from engine.judges.http.prompt import PROMPT_DIR, load_prompt
from engine.judges.http.replies import (
    parse_chunk_use,
    parse_claims,
    parse_metric,
    parse_rubric,
    parse_verdict,
)

PROMPT_NAMES = (
    "extract_claims",
    "verify_claim",
    "verify_claims",
    "rubric",
    "rag_correctness",
    "rag_relevance",
    "chunk_used",
    "repair",
    *GRADED_PROMPTS,
    *CONVERSATION_PROMPTS,
)


def prompt_set_version(version: str = "v1") -> str:
    """``v1-<8 hex>``: the version plus a hash of every prompt file's text, so an edited
    prompt is a new version even if someone forgets to bump the file name."""
    digest = hashlib.sha256()
    for name in PROMPT_NAMES:
        digest.update((PROMPT_DIR / f"{name}.{version}.md").read_bytes())
    return f"{version}-{digest.hexdigest()[:8]}"


def _numbered(texts: Sequence[str]) -> str:
    return "\n\n".join(f"[{i + 1}] {t}" for i, t in enumerate(texts)) or "(no context)"


class HttpJudge(GradedCalls, ConversationCalls):
    """An LLM judge over HTTP; the wire format decides the provider. Grader-file calls
    (rubrics, G-Eval, factuality, context relevance) come from ``GradedCalls``."""

    client: HttpJudgeClient

    def __init__(
        self, client: HttpJudgeClient, *, prompt_version: str = "v1", batch_claims: bool = False
    ) -> None:
        self.client = client
        self._version = prompt_version
        self._prompts = {name: load_prompt(name, prompt_version) for name in PROMPT_NAMES}
        self._batch = batch_claims
        # Batched verification asks other prompts: its runs say so in their prompt version.
        suffix = "-batched" if batch_claims else ""
        self._set_version = prompt_set_version(prompt_version) + suffix

    @property
    def name(self) -> str:
        """``provider:model``."""
        return f"{self.client.wire.provider}:{self.client.model}"

    @property
    def prompt_version(self) -> str:
        """Version of the prompt files, with a hash of their text."""
        return self._set_version

    async def extract_claims(self, response: str) -> ClaimsResult:
        """Atomic claims from the model; offsets kept when a claim is verbatim."""
        if not response.strip():
            return ClaimsResult(claims=())
        claims, usage = await self.client.complete_json(
            self._prompts["extract_claims"], {"answer": response}, parse_claims
        )
        out = []
        for claim in claims:
            start = response.find(claim)
            out.append(
                ExtractedClaim(
                    text=claim,
                    start=start if start >= 0 else None,
                    end=start + len(claim) if start >= 0 else None,
                )
            )
        return ClaimsResult(claims=tuple(out), usage=usage)

    async def verify_claim(self, claim: str, context: Sequence[str]) -> ClaimVerdict:
        """SUPPORTED / CONTRADICTED / NOT_ENOUGH_INFO with quoted evidence."""
        if not any(c.strip() for c in context):
            return ClaimVerdict(verdict="NOT_ENOUGH_INFO", evidence="No context to verify")
        (verdict, evidence), usage = await self.client.complete_json(
            self._prompts["verify_claim"],
            {"claim": claim, "context": _numbered(context)},
            parse_verdict,
        )
        return ClaimVerdict(verdict=verdict, evidence=evidence, usage=usage)

    @property
    def batches_claims(self) -> bool:
        """Whether a sample's claims are verified in one call (``judge_calls=batched``)."""
        return self._batch

    async def verify_claims(
        self, claims: Sequence[str], context: Sequence[str]
    ) -> list[ClaimVerdict]:
        """Every claim against the context in one call (``engine.judges.http.batched``), each
        verdict naming the passages that state its claim."""
        if not any(c.strip() for c in context):
            return [
                ClaimVerdict(
                    verdict="NOT_ENOUGH_INFO", evidence="No context to verify", passages=()
                )
                for _ in claims
            ]
        return await verify_in_batches(
            self.client, self._prompts["verify_claims"], claims, _numbered(context), len(context)
        )

    async def score_rubric(
        self, question: str, context: Sequence[str], answer: str
    ) -> RubricResult:
        """Faithfulness and completeness 1-5 with reasoning."""
        (faithfulness, completeness), usage = await self.client.complete_json(
            self._prompts["rubric"],
            {"question": question, "context": _numbered(context), "answer": answer},
            parse_rubric,
        )
        return RubricResult(faithfulness=faithfulness, completeness=completeness, usage=usage)

    async def score_correctness(self, question: str, answer: str, reference: str) -> MetricScore:
        """RAG correctness 1-5 against the reference."""
        (score, reasoning), usage = await self.client.complete_json(
            self._prompts["rag_correctness"],
            {"question": question, "answer": answer, "reference": reference},
            parse_metric,
        )
        return MetricScore(score=score, reasoning=reasoning, usage=usage)

    async def score_relevance(self, question: str, answer: str) -> MetricScore:
        """RAG relevance 1-5."""
        (score, reasoning), usage = await self.client.complete_json(
            self._prompts["rag_relevance"], {"question": question, "answer": answer}, parse_metric
        )
        return MetricScore(score=score, reasoning=reasoning, usage=usage)

    async def chunk_used(self, claims: Sequence[str], chunk: str) -> ChunkUse:
        """Does the chunk support at least one claim (RAG precision)."""
        if not claims:
            return ChunkUse(used=False, reasoning="No statements to support.")
        (used, reasoning), usage = await self.client.complete_json(
            self._prompts["chunk_used"],
            {"chunk": chunk, "claims": "\n".join(f"- {c}" for c in claims)},
            parse_chunk_use,
        )
        return ChunkUse(used=used, reasoning=reasoning, usage=usage)

    async def aclose(self) -> None:
        """Close HTTP connections."""
        await self.client.aclose()
