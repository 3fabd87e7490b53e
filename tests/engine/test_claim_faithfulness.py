"""Claim-level faithfulness: the DDR acceptance table, verdict handling and retries."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from engine.judges.base import (
    ChunkUse,
    ClaimsResult,
    ClaimVerdict,
    ExtractedClaim,
    JudgeResponseError,
    MetricScore,
    RubricResult,
    RubricScore,
    Usage,
)
from engine.scoring.faithfulness import claim_faithfulness, faithfulness_score
from tests.engine.test_http_judges import make_judge
from tests.loopback_llm import LoopbackLLM, Reply, loopback_llm

__all__ = ["loopback_llm"]


class ScriptedJudge:
    """A fake judge: claims are the response's lines, verdicts come from a table."""

    name = "scripted"
    prompt_version = "test"

    def __init__(self, verdicts: dict[str, str], failures: int = 0) -> None:
        self.verdicts = verdicts
        self.failures = failures
        self.verify_calls = 0

    async def extract_claims(self, response: str) -> ClaimsResult:
        lines = [line for line in response.splitlines() if line.strip()]
        return ClaimsResult(
            claims=tuple(ExtractedClaim(text=t) for t in lines), usage=Usage(calls=1)
        )

    async def verify_claim(self, claim: str, context: Sequence[str]) -> ClaimVerdict:
        self.verify_calls += 1
        if self.failures:
            self.failures -= 1
            raise JudgeResponseError("invalid verdict 'MAYBE'")
        return ClaimVerdict(verdict=self.verdicts[claim], evidence="ctx", usage=Usage(calls=1))  # type: ignore[arg-type]

    async def score_rubric(
        self, question: str, context: Sequence[str], answer: str
    ) -> RubricResult:
        return RubricResult(faithfulness=RubricScore(score=5), completeness=RubricScore(score=5))

    async def score_correctness(self, question: str, answer: str, reference: str) -> MetricScore:
        return MetricScore(score=3)

    async def score_relevance(self, question: str, answer: str) -> MetricScore:
        return MetricScore(score=4)

    async def chunk_used(self, claims: Sequence[str], chunk: str) -> ChunkUse:
        return ChunkUse(used=True)


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        ({"a": "SUPPORTED", "b": "SUPPORTED"}, 1.0),  # all claims supported
        ({"a": "SUPPORTED", "b": "NOT_ENOUGH_INFO"}, 0.5),  # half supported
        ({}, 1.0),  # no claims (empty response): vacuously faithful
        ({"a": "CONTRADICTED", "b": "NOT_ENOUGH_INFO"}, 0.0),  # all unsupported
    ],
)
def test_ddr_acceptance_table(verdicts: dict[str, str], expected: float) -> None:
    judge = ScriptedJudge(verdicts)
    response = "\n".join(verdicts)
    result = asyncio.run(claim_faithfulness(response, ["context"], judge))
    assert result.score == expected
    assert len(result.checks) == len(verdicts)
    assert all(c.verdict.evidence == "ctx" for c in result.checks)


def test_counts_reasoning_and_usage() -> None:
    judge = ScriptedJudge({"a": "SUPPORTED", "b": "CONTRADICTED", "c": "NOT_ENOUGH_INFO"})
    result = asyncio.run(claim_faithfulness("a\nb\nc", ["x"], judge))
    assert (result.supported, result.contradicted, result.not_enough_info) == (1, 1, 1)
    assert result.score == pytest.approx(1 / 3)
    assert "'b' (CONTRADICTED)" in result.reasoning
    assert result.usage.calls == 4  # one extraction, three verifications
    assert faithfulness_score([]) == 1.0


def test_whitespace_response_has_no_claims() -> None:
    assert asyncio.run(claim_faithfulness("  \n ", ["x"], ScriptedJudge({}))).score == 1.0


def test_invalid_verdict_is_retried_once_then_propagates() -> None:
    once = ScriptedJudge({"a": "SUPPORTED"}, failures=1)
    assert asyncio.run(claim_faithfulness("a", ["x"], once)).score == 1.0
    assert once.verify_calls == 2
    twice = ScriptedJudge({"a": "SUPPORTED"}, failures=2)
    with pytest.raises(JudgeResponseError):
        asyncio.run(claim_faithfulness("a", ["x"], twice))


def test_invalid_verdict_from_http_judge_propagates(loopback_llm: LoopbackLLM) -> None:
    loopback_llm.script(
        Reply.json({"claims": ["Pro costs $20"]}),
        *[Reply.json({"verdict": "PROBABLY"})] * 4,  # two verify attempts, each with a repair
    )
    judge = make_judge(loopback_llm)
    with pytest.raises(JudgeResponseError, match="invalid verdict"):
        asyncio.run(claim_faithfulness("Pro costs $20.", ["Pro is $20."], judge))
    assert loopback_llm.count == 5


def test_lowercase_verdict_from_http_judge_is_normalised(loopback_llm: LoopbackLLM) -> None:
    loopback_llm.script(
        Reply.json({"claims": ["Pro costs $20", "It has SSO"]}),
        Reply.json({"verdict": "supported", "evidence": "Pro is $20."}),
        Reply.json({"verdict": "not_enough_info", "evidence": ""}),
    )
    judge = make_judge(loopback_llm, concurrency=1)
    result = asyncio.run(claim_faithfulness("Pro costs $20. It has SSO.", ["Pro is $20."], judge))
    assert [c.verdict.verdict for c in result.checks] == ["SUPPORTED", "NOT_ENOUGH_INFO"]
    assert result.score == 0.5
