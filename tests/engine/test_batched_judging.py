"""Batched judging: all of a sample's claims verified in one call whose reply
names the chunks stating each claim gives the same verdicts and RAG scores as one call per
claim and per chunk, in fewer calls, and the estimate counts the calls made.

The loopback server plays a deterministic model that reads each prompt as a person would:
a passage states a claim when it holds every word of it; it contradicts the claim when it
shares the claim's words but not its number. Both ways ask the same questions of the same
model, so any difference would be the plumbing's (numbering, order, passages, precision).
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest

from engine.judges.base import JudgeResponseError
from engine.judges.http.batched import CLAIMS_PER_CALL, parse_claim_verdicts
from engine.judges.http.client import HttpJudgeClient
from engine.judges.http.judge import HttpJudge
from engine.judges.http.openai_compat import OpenAIWire
from engine.models import SampleKey, TestCase
from engine.scorers.judge import judge_calls
from engine.scoring.judging import JudgeOutcome, judge_sample
from tests.loopback_llm import LoopbackLLM, Reply

WORD = re.compile(r"[a-z0-9$]+")


def _words(text: str) -> set[str]:
    return set(WORD.findall(text.lower())) - {"the", "a", "an", "is", "of", "per"}


def _states(passage: str, claim: str) -> bool:
    return _words(claim) <= _words(passage)


def _contradicts(passage: str, claim: str) -> bool:
    numbers = {w for w in _words(claim) if any(ch.isdigit() for ch in w)}
    if not numbers or numbers <= _words(passage):
        return False
    rest = _words(claim) - numbers
    return bool(rest) and rest <= _words(passage)


def _verdict(passages: list[str], claim: str) -> tuple[str, str]:
    for passage in passages:
        if _states(passage, claim):
            return "SUPPORTED", passage
    for passage in passages:
        if _contradicts(passage, claim):
            return "CONTRADICTED", passage
    return "NOT_ENOUGH_INFO", ""


def _between(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].split(end, 1)[0]


def _passages(block: str) -> list[str]:
    return [re.sub(r"^\[\d+\]\s*", "", p.strip()) for p in block.strip().split("\n\n")]


def _lines(text: str, after: str, marker: str) -> list[str]:
    block = text.split(after, 1)[1].strip().split("\n\n")[0]
    return [re.sub(marker, "", line).strip() for line in block.splitlines() if line.strip()]


def model(provider: str, body: dict[str, Any]) -> Reply:
    """The deterministic model behind every prompt of ``judge_sample``."""
    system = body["messages"][0]["content"]
    user = body["messages"][-1]["content"]
    if "atomic factual claims" in system:
        answer = _between(user, "<<<\n", "\n>>>")
        claims = [s.strip() for s in re.split(r"(?<=\.)\s+", answer) if s.strip()]
        if "don't know" in answer:
            claims = []
        return Reply.json({"claims": claims})
    if "whether claims are supported" in system:
        passages = _passages(_between(user, "<<<\n", "\n>>>"))
        claims = _lines(user, "CLAIMS:\n", r"^\d+\.\s*")
        rows = []
        for number, claim in enumerate(claims, start=1):
            verdict, evidence = _verdict(passages, claim)
            stating = [j for j, p in enumerate(passages, start=1) if _states(p, claim)]
            rows.append(
                {"claim": number, "verdict": verdict, "evidence": evidence, "passages": stating}
            )
        return Reply.json({"verdicts": rows})
    if "whether a claim is supported" in system:
        passages = _passages(_between(user, "<<<\n", "\n>>>"))
        claim = user.split("CLAIM: ", 1)[1].split("\n", 1)[0].strip()
        verdict, evidence = _verdict(passages, claim)
        return Reply.json({"verdict": verdict, "evidence": evidence})
    if "retrieved passage supports" in system:
        passage = _between(user, "<<<\n", "\n>>>")
        statements = _lines(user, "STATEMENTS:\n", r"^-\s*")
        used = any(_states(passage, s) for s in statements)
        return Reply.json({"used": used, "reasoning": "stated" if used else "none"})
    if '"faithfulness"' in user:
        return Reply.json(
            {
                "faithfulness": {"score": 4, "reasoning": "mostly grounded"},
                "completeness": {"score": 3, "reasoning": "brief"},
            }
        )
    return Reply.json({"score": 4, "reasoning": "close to the reference"})


def _judge(server: LoopbackLLM, batched: bool) -> HttpJudge:
    client = HttpJudgeClient(
        OpenAIWire(), model="m", base_url=server.url, api_key="sk-test", max_retries=0
    )
    return HttpJudge(client, batch_claims=batched)


def _case(context: list[str], reference: str = "The Pro plan costs $20 per month.") -> TestCase:
    return TestCase.model_validate(
        {
            "id": "acme-q01",
            "domain": "acme.com",
            "query": "How much does the Pro plan cost?",
            "expected_answer": {"text": reference},
            "context": context,
        }
    )


CONTEXT = [
    "The Pro plan costs $20 per month.",
    "Support is available Monday to Friday.",
    "The Team plan adds shared folders.",
]
CASES = [
    # supported by chunk 1, contradicted by chunk 1, not in the context; chunk 3 unused
    (
        _case(CONTEXT),
        "The Pro plan costs $25 per month. Support is available Monday to Friday. "
        "Refunds take 5 days.",
    ),
    # one claim stated by two chunks
    (
        _case([CONTEXT[0], "Pro plan costs $20 per month, billed yearly."]),
        "Pro plan costs $20 per month.",
    ),
    # an abstention: the reference's claims are the basis of recall and precision
    (_case(CONTEXT), "I don't know."),
    # no context: nothing to verify, no precision
    (_case([]), "The Pro plan costs $20 per month."),
    # no answer
    (_case(CONTEXT), ""),
]


def _run(server: LoopbackLLM, case: TestCase, response: str, batched: bool) -> JudgeOutcome:
    async def go() -> JudgeOutcome:
        judge = _judge(server, batched)
        try:
            return await judge_sample(case, response, judge)
        finally:
            await judge.aclose()

    return asyncio.run(go())


def _comparable(outcome: JudgeOutcome) -> dict[str, Any]:
    fields = outcome.result_fields()
    for tokens in ("judge_input_tokens", "judge_output_tokens"):
        fields.pop(tokens)  # the batched prompts are shorter: that is the point
    records = outcome.verdict_records(SampleKey(run_id="r", iteration=1, sample_id="s"))
    return {
        "fields": fields,
        "verdicts": [r.model_dump(exclude={"run_id"}) for r in records],
        "chunks": [u.used for u in outcome.rag.chunk_uses],
    }


@pytest.mark.parametrize(("case", "response"), CASES)
def test_batched_and_per_prompt_judging_give_the_same_verdicts(
    case: TestCase, response: str
) -> None:
    with LoopbackLLM(responder=model) as server:
        per_prompt = _run(server, case, response, batched=False)
        per_prompt_calls = server.count
        batched = _run(server, case, response, batched=True)
        batched_calls = server.count - per_prompt_calls
    assert _comparable(batched) == _comparable(per_prompt)
    assert (per_prompt.usage.calls, batched.usage.calls) == (per_prompt_calls, batched_calls)
    assert batched_calls <= per_prompt_calls


def test_the_mixed_sample_takes_5_calls_instead_of_10_and_the_estimate_says_so() -> None:
    case, response = CASES[0]
    with LoopbackLLM(responder=model) as server:
        _run(server, case, response, batched=False)
        per_prompt_calls = server.count
        batched = _run(server, case, response, batched=True)
        batched_calls = server.count - per_prompt_calls
    # extract + 3 verifications + rubric + relevance + correctness + 3 chunk-use calls
    assert per_prompt_calls == 1 + 3 + 1 + 1 + 1 + 3 == judge_calls(case, response)
    # extract + 1 verification naming the chunks + rubric + relevance + correctness
    assert batched_calls == 5 == judge_calls(case, response, batched=True)
    assert [c.verdict.verdict for c in batched.checks] == [
        "CONTRADICTED",
        "SUPPORTED",
        "NOT_ENOUGH_INFO",
    ]
    # only chunk 2 states a claim of the answer (chunk 1 holds $20, not the answer's $25)
    assert [u.used for u in batched.rag.chunk_uses] == [False, True, False]
    assert batched.rag.precision == pytest.approx(1 + 4 * (1 / 3))


def test_one_verification_call_per_12_claims() -> None:
    claims = [f"Fact {i} is in passage {i}." for i in range(CLAIMS_PER_CALL + 2)]
    context = [" ".join(claims)]
    with LoopbackLLM(responder=model) as server:

        async def go() -> list[str]:
            judge = _judge(server, batched=True)
            verdicts = await judge.verify_claims(claims, context)
            await judge.aclose()
            return [v.verdict for v in verdicts]

        verdicts = asyncio.run(go())
        assert server.count == 2
    assert verdicts == ["SUPPORTED"] * len(claims)


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ({"verdicts": [{"claim": 1, "verdict": "SUPPORTED", "passages": []}]}, "expected 2"),
        (
            {
                "verdicts": [
                    {"claim": 1, "verdict": "SUPPORTED", "passages": []},
                    {"claim": 1, "verdict": "SUPPORTED", "passages": []},
                ]
            },
            "two verdicts",
        ),
        (
            {
                "verdicts": [
                    {"claim": 1, "verdict": "SUPPORTED", "passages": [3]},
                    {"claim": 2, "verdict": "SUPPORTED", "passages": []},
                ]
            },
            "numbers 1-2",
        ),
        (
            {
                "verdicts": [
                    {"claim": 1, "verdict": "PROBABLY", "passages": []},
                    {"claim": 2, "verdict": "SUPPORTED", "passages": []},
                ]
            },
            "invalid verdict",
        ),
    ],
)
def test_a_reply_that_does_not_fit_is_an_error_never_a_guess(
    reply: dict[str, Any], problem: str
) -> None:
    with pytest.raises(JudgeResponseError, match=problem):
        parse_claim_verdicts(2, 2)(json.loads(json.dumps(reply)))


def test_verdicts_answered_out_of_order_are_put_back_in_claim_order() -> None:
    reply = {
        "verdicts": [
            {"claim": 2, "verdict": "contradicted", "evidence": "b", "passages": [2, 2]},
            {"claim": 1, "verdict": "Supported", "evidence": "a", "passages": [1]},
        ]
    }
    assert parse_claim_verdicts(2, 2)(reply) == [
        ("SUPPORTED", "a", (0,)),
        ("CONTRADICTED", "b", (1,)),
    ]
