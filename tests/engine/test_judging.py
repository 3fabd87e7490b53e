"""judge_sample: the runner's interface. Claims are extracted once; result fields match the
ResultRecord; verdict records keep offsets; usage adds up over HTTP calls."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from engine.judges.base import ClaimsResult, Judge
from engine.judges.local.judge import LocalJudge
from engine.models import ResultRecord, SampleKey, TestCase, VerdictRecord
from engine.scoring.judging import JudgeOutcome, judge_sample
from tests.engine.test_http_judges import make_judge
from tests.engine.test_local_judge import HashEmbedder
from tests.loopback_llm import LoopbackLLM, loopback_llm

__all__ = ["loopback_llm"]

CASE = TestCase.model_validate(
    {
        "id": "acme-q01",
        "domain": "acme.com",
        "query": "How much does the Pro plan cost?",
        "expected_answer": {"text": "The Pro plan costs $20 per month."},
        "ground_truth": [
            {"chunk_id": "p1#0", "text": "The Pro plan costs $20 per month."},
            {"chunk_id": "p1#1", "text": "Support is available Monday to Friday."},
        ],
    }
)
RESULT_KEYS = {
    "judge_faithfulness",
    "flags",
    "judge_completeness",
    "judge_reasoning",
    "faithfulness_reasoning",
    "completeness_reasoning",
    "passed",
    "overall",
    "claim_faithfulness",
    "rag_correctness",
    "rag_faithfulness",
    "rag_precision",
    "rag_recall",
    "rag_relevance",
    "rag_overall",
    "judge_input_tokens",
    "judge_output_tokens",
}


class CountingJudge:
    """Wraps a judge and counts claim extractions."""

    def __init__(self, inner: Judge) -> None:
        self.inner = inner
        self.extractions = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def extract_claims(self, response: str) -> ClaimsResult:
        self.extractions += 1
        return await self.inner.extract_claims(response)


def test_local_judge_sample() -> None:
    judge = CountingJudge(LocalJudge(HashEmbedder()))
    response = "The Pro plan costs $25 per month. Support is available Monday to Friday."
    outcome = asyncio.run(judge_sample(CASE, response, judge))  # type: ignore[arg-type]
    assert judge.extractions == 1
    fields = outcome.result_fields()
    assert set(fields) == RESULT_KEYS
    assert set(ResultRecord.model_fields) >= RESULT_KEYS
    assert outcome.claim_faithfulness == 0.5
    assert fields["rag_faithfulness"] == 3.0
    assert fields["rag_precision"] == 3.0  # only the support chunk backs a claim
    assert fields["passed"] is False
    assert outcome.judge == "local"
    assert "Local judge" in fields["judge_reasoning"]
    records = outcome.verdict_records(SampleKey(run_id="r1", iteration=1, sample_id=CASE.id))
    assert [r.verdict for r in records] == ["CONTRADICTED", "SUPPORTED"]
    assert records[0].rule == "number"
    for r in records:
        assert isinstance(r, VerdictRecord)
        assert r.response_start is not None and r.response_end is not None
        assert response[r.response_start : r.response_end] == r.claim_text
    assert [r.claim_index for r in records] == [0, 1]


def test_empty_response() -> None:
    outcome = asyncio.run(judge_sample(CASE, "", LocalJudge(HashEmbedder())))
    # No answer: faithfulness does not apply (null, out of means), and it is not passed.
    assert outcome.claim_faithfulness is None and outcome.judge_faithfulness is None
    assert outcome.passed is False and outcome.overall is None
    assert outcome.rag.faithfulness is None
    assert outcome.judge_completeness == 1.0
    assert outcome.verdict_records(SampleKey(run_id="r", iteration=1, sample_id="x")) == []
    assert outcome.result_fields()["flags"] == ["empty_response"]


def test_http_judge_sample_sums_usage(loopback_llm: LoopbackLLM) -> None:
    def reply(provider: str, body: dict[str, Any]) -> str:
        prompt = json.dumps(body["messages"])
        if "atomic factual claims" in prompt:
            return json.dumps({"claims": ["The Pro plan costs $20 per month"]})
        if "CLAIM:" in prompt:
            return json.dumps({"verdict": "Supported", "evidence": "costs $20"})
        if "FAITHFULNESS" in prompt:
            return json.dumps(
                {
                    "faithfulness": {"score": 5, "reasoning": "ok"},
                    "completeness": {"score": 4, "reasoning": "ok"},
                }
            )
        if "PASSAGE" in prompt:
            return json.dumps({"used": "Support" not in prompt, "reasoning": "r"})
        return json.dumps({"score": 4, "reasoning": "r"})

    loopback_llm.responder = reply
    judge = make_judge(loopback_llm)
    outcome: JudgeOutcome = asyncio.run(
        judge_sample(CASE, "The Pro plan costs $20 per month.", judge)
    )
    fields = outcome.result_fields()
    assert fields["passed"] is True and fields["overall"] == 4.5
    assert fields["claim_faithfulness"] == 1.0
    assert fields["rag_precision"] == 3.0
    assert fields["rag_correctness"] == 4 and fields["rag_relevance"] == 4
    # extract + verify + rubric + correctness + relevance + 2 chunk checks
    assert loopback_llm.count == 7
    assert outcome.usage.calls == 7
    assert fields["judge_input_tokens"] > 0 and fields["judge_output_tokens"] > 0
    assert outcome.usage.cost_usd > 0


def test_pass_rates_count_answers_that_say_nothing_as_not_passed() -> None:
    """The answer-synthesis seed's denominator: 3 pass, 3 fail, 1 refusal, 1 empty -> 3/8."""
    from engine.scoring.synthesis import SynthesisOutcome, iteration_metrics

    def one(i: int, f: float | None, c: float) -> SynthesisOutcome:
        return SynthesisOutcome(sample_id=f"s{i}", question="q", faithfulness=f, completeness=c)

    outcomes = [one(0, 5, 5), one(1, 4, 4), one(2, 5, 4), one(3, 2, 3), one(4, 5, 3),
                one(5, 3, 5), one(6, None, 1), one(7, None, 1)]  # fmt: skip
    error = SynthesisOutcome(sample_id="e", question="q", faithfulness=None, completeness=None)
    got = iteration_metrics([*outcomes, error])
    assert got["scored"] == 8  # the error row is left out
    assert got["pass_rate"] == 3 / 8
    assert got["faithfulness_pass_rate"] == 4 / 8  # s0, s1, s2, s4
    assert got["completeness_pass_rate"] == 4 / 8  # s0, s1, s2, s5
    assert got["judge_faithfulness_mean"] == (5 + 4 + 5 + 2 + 5 + 3) / 6
