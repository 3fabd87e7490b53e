"""Conversation grading parts: the sliding window, the local rules, the LLM reply parsers,
the per-turn journal, an http:URL target answering with the history, and the estimate's
token count (all numbers by hand)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from engine.judges.base import JudgeResponseError
from engine.judges.conversation import Said
from engine.judges.http.conversational import parse_completeness, parse_retention, parse_turn
from engine.models import Conversation, SampleKey
from engine.run.conversing import TurnJournal, converse
from engine.run.estimate import conversation_calls
from engine.scoring.conversation import (
    OUT_OF_ROLE,
    asked_again,
    expectation_score,
    window,
)
from engine.targets import TurnReply, build_target
from engine.testsets.conversations import conversation_case
from tests.loopback_llm import LoopbackLLM, Reply

TURNS = [Said(n, "user" if n % 2 else "assistant", f"t{n}") for n in range(1, 11)]


def test_sliding_window_is_the_write_ups_formula() -> None:
    # turns[max(0, current - windowSize) .. current - 1], positions from 0
    assert [t.turn for t in window(TURNS, 3, 3)] == [1, 2, 3]  # evaluating T4
    assert [t.turn for t in window(TURNS, 4, 3)] == [2, 3, 4]  # T5
    assert [t.turn for t in window(TURNS, 1, 5)] == [1]
    assert list(window(TURNS, 0, 5)) == []


def test_knowledge_attrition_rule() -> None:
    given = Said(1, "user", "Hi, my order #12345 hasn't arrived")
    ask = Said(2, "assistant", "Sorry to hear that. What is your order number?")
    assert asked_again([given, ask], ask) == "turn 2 asks for the order number given at turn 1"
    # the same words without a question are no attrition
    tell = Said(2, "assistant", "Your order number is 12345.")
    assert asked_again([given, tell], tell) is None
    # asking for a detail nobody gave is a fair question
    mail = Said(2, "assistant", "Could you give me your e-mail?")
    assert asked_again([given, mail], mail) is None
    gave_mail = Said(1, "user", "I'm at ada@example.com")
    assert asked_again([gave_mail, mail], mail) == (
        "turn 2 asks for the e-mail address given at turn 1"
    )
    # a detail given after the reply does not count
    assert asked_again([mail, Said(3, "user", "ada@example.com")], mail) is None


def test_out_of_role_phrases() -> None:
    assert OUT_OF_ROLE.search("As an AI language model, I cannot")
    assert OUT_OF_ROLE.search("i'm an AI and cannot see accounts")
    assert OUT_OF_ROLE.search("I was trained by OpenAI")
    assert not OUT_OF_ROLE.search("Our AI-powered tracking shows the parcel in Lyon")


def test_local_expectation_score_mapping() -> None:
    # linear from cosine 0.1 (score 0) to 0.45 (score 1), clipped
    assert expectation_score(0.1) == 0.0
    assert expectation_score(0.275) == pytest.approx(0.5)
    assert expectation_score(0.45) == pytest.approx(1.0)
    assert expectation_score(-0.2) == 0.0 and expectation_score(0.9) == 1.0


def test_llm_reply_parsers() -> None:
    parse = parse_turn(has_expectation=True, has_role=False)
    assert parse({"expectation_score": 1, "relevant": False, "reason": "x"}) == (
        1.0, False, None, "x"
    )  # fmt: skip
    with pytest.raises(JudgeResponseError, match="expectation_score"):
        parse({"expectation_score": 1.5, "relevant": True})
    with pytest.raises(JudgeResponseError, match="expectation_score"):
        parse({"expectation_score": True, "relevant": True})
    with pytest.raises(JudgeResponseError, match="relevant"):
        parse({"expectation_score": 0.5, "relevant": "yes"})
    with pytest.raises(JudgeResponseError, match="in_role"):
        parse_turn(False, True)({"relevant": True})
    assert parse_turn(False, False)({"relevant": True, "expectation_score": None})[0] is None
    retention = parse_retention(frozenset({2, 4}))
    assert retention({"attrition_turns": [4], "reason": "r"}) == (frozenset({4}), "r")
    with pytest.raises(JudgeResponseError, match=r"turns \[3\] are not assistant turns"):
        retention({"attrition_turns": [3]})
    intents, _ = parse_completeness({"intents": [{"intent": "a", "satisfied": True}]})
    assert [(i.text, i.satisfied) for i in intents] == [("a", True)]
    with pytest.raises(JudgeResponseError):
        parse_completeness({"intents": [{"intent": "a", "satisfied": "yes"}]})


def test_journal_ignores_a_torn_last_line(tmp_path: Path) -> None:
    journal = TurnJournal(tmp_path)
    key = SampleKey(run_id="r", iteration=1, sample_id="c")
    journal.append(key, TurnReply(turn=2, content="Hello", generated=True, cost_usd=0.01))
    with journal.path(key).open("a", encoding="utf-8") as handle:
        handle.write('{"turn": 4, "content": "cut sho')  # a kill in the middle of a write
    assert journal.read(key) == {2: TurnReply(turn=2, content="Hello", generated=True,
                                              cost_usd=0.01)}  # fmt: skip
    other = SampleKey(run_id="r", iteration=2, sample_id="c")
    assert journal.read(other) == {}  # per iteration


def _conversation() -> Conversation:
    return Conversation.model_validate(
        {
            "id": "c1",
            "chatbot_role": "You are Acme's agent",
            "turns": [
                {"turn": 1, "role": "user", "content": "Hi, order #12345 is late"},
                {"turn": 2, "role": "assistant", "content": "recorded, ignored"},
                {"turn": 3, "role": "user", "content": "Refund please"},
                {"turn": 4, "role": "assistant"},
            ],
        }
    )


def test_http_endpoint_target_gets_the_history(tmp_path: Path) -> None:
    def answer(provider: str, body: dict[str, Any] | None) -> Reply:
        messages = (body or {})["messages"]
        return Reply.text(f"reply to {messages[-1]['content']} after {len(messages)} messages")

    conv = _conversation()
    with LoopbackLLM(responder=answer) as llm:
        target = build_target(
            f"http:{llm.url}/v1/chat/completions",
            extra={
                "http_body": '{"messages": "{{metadata.messages}}", '
                '"session": "{{metadata.conversation_id}}"}',
                "http_answer_path": "choices[0].message.content",
            },
        )
        journal = TurnJournal(tmp_path)
        key = SampleKey(run_id="r", iteration=1, sample_id="c1")
        reply = asyncio.run(converse(conversation_case(conv, "d"), conv, target, journal, key))
        sent = [r.body for r in llm.requests]
    assert [t.content for t in reply.turns] == [
        "reply to Hi, order #12345 is late after 1 messages",
        "reply to Refund please after 3 messages",
    ]
    assert sent[1] == {
        "messages": [
            {"role": "user", "content": "Hi, order #12345 is late"},
            {"role": "assistant", "content": "reply to Hi, order #12345 is late after 1 messages"},
            {"role": "user", "content": "Refund please"},
        ],
        "session": "c1",
    }
    assert reply.text.endswith("assistant: reply to Refund please after 3 messages")
    # both replies journaled, in order
    lines = journal.path(key).read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["turn"] for line in lines] == [2, 4]


def test_estimate_counts_the_growing_history() -> None:
    conv = Conversation.model_validate(
        {
            "id": "c",
            "turns": [
                {"turn": 1, "role": "user", "content": "x" * 40},  # 10 tokens
                {"turn": 2, "role": "assistant"},
                {"turn": 3, "role": "user", "content": "y" * 40},
                {"turn": 4, "role": "assistant"},
            ],
        }
    )
    got = conversation_calls(conv, 350, (1.0, 2.0))
    # call 1: 350 + 10; call 2: 350 + 10 + 250 (reply 1 assumed) + 10; 250 out each
    assert (got.calls, got.input_tokens, got.output_tokens) == (2, 360 + 620, 500)
    assert got.cost_usd == pytest.approx((980 * 1.0 + 500 * 2.0) / 1e6)


@pytest.mark.parametrize("provider", ["anthropic", "ollama"])
def test_every_http_judge_grades_conversations(
    provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine.judges.factory import build_llm_judge
    from engine.scorers.conversation import conversation_judge

    turns = [
        Said(1, "user", "My order #12345 is late"),
        Said(2, "assistant", "What is your order number?", "Give the order status"),
    ]
    with LoopbackLLM() as llm:
        llm.script(
            Reply.json({"reason": "asks back", "expectation_score": 0.25, "relevant": True,
                        "in_role": False}),
            Reply.json({"reason": "forgot #12345", "attrition_turns": [2]}),
        )  # fmt: skip
        monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
        judge = build_llm_judge(f"{provider}:m", cache_dir=None, base_url=llm.url)
        graded = conversation_judge(judge, embedder=None)
        assert graded is judge  # the LLM judge's own conversation calls, not the local rules

        async def both() -> tuple[Any, Any]:
            try:
                verdict = await graded.grade_turn("You are Acme's agent", turns[:1], turns[1])
                return verdict, await graded.retention(turns)
            finally:
                await judge.aclose()

        verdict, retention = asyncio.run(both())
        paths = [r.path for r in llm.requests]
        prompt = llm.requests[0].prompt_text
    assert (verdict.expectation_score, verdict.relevant, verdict.in_role) == (0.25, True, False)
    assert verdict.usage.calls == 1
    assert retention.attrition == frozenset({2}) and retention.reason == "forgot #12345"
    wire = "/v1/messages" if provider == "anthropic" else "/v1/chat/completions"
    assert paths == [wire, wire]
    assert "[1] user: My order #12345 is late" in prompt  # the window, numbered
    assert "Give the order status" in prompt and "You are Acme's agent" in prompt
