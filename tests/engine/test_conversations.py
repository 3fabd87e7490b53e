"""Conversation test sets: the write-up's multi-turn CSV and its JSON form as JSONL."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.testsets.base import TestSetError
from engine.testsets.conversations import is_conversation_header, load_conversations

DATA = Path(__file__).resolve().parents[1] / "data" / "conversations"


def test_write_up_csv() -> None:
    path = DATA / "support.csv"
    loaded = load_conversations(path)
    assert loaded.format == "conversations-csv"
    assert [c.id for c in loaded.conversations] == ["delayed-shipment", "conv-1"]
    shipment = loaded.conversations[0]
    assert [(t.turn, t.role) for t in shipment.turns] == [
        (1, "user"), (2, "assistant"), (3, "user"), (4, "assistant"), (5, "user"),
        (6, "assistant"),
    ]  # fmt: skip
    assert shipment.turns[0].content == "Hi, my order #12345 hasn't arrived yet"
    assert shipment.turns[5].expected == "Explain refund policy and offer options"
    # rows out of order are put in turn order
    assert [t.turn for t in loaded.conversations[1].turns] == [1, 2, 3, 4]
    assert [str(p) for p in loaded.problems] == [
        f"{path}:12: conversation 'no-reply': no assistant turn to evaluate; skipped",
        f"{path}:13: turn 'one' is not a whole number",
    ]


def test_jsonl_form() -> None:
    path = DATA / "support.jsonl"
    loaded = load_conversations(path)
    (conv,) = loaded.conversations
    assert (conv.id, conv.scenario) == ("delayed", "Customer support — delayed shipment")
    assert conv.chatbot_role.startswith("You are a helpful customer support agent")
    assert [(t.turn, t.role, t.expected) for t in conv.turns][1] == (
        2, "assistant", "Acknowledge order number, ask what the issue is"
    )  # fmt: skip
    problems = [str(p) for p in loaded.problems]
    assert problems[0].startswith(f"{path}:2: conversation 'robot': turns.1.role: Input ")
    assert (
        problems[1] == f"{path}:3: conversation 'empty-user': user turn 1 has no content; skipped"
    )


def test_refusals(tmp_path: Path) -> None:
    plain = tmp_path / "cases.csv"
    plain.write_text("input,expected_output\nHi,Hello\n", encoding="utf-8")
    with pytest.raises(TestSetError, match="not a conversation CSV: the header needs the columns"):
        load_conversations(plain)
    twice = tmp_path / "twice.csv"
    twice.write_text(
        "conversation_id,turn,role,content,expected_output\nc,1,user,Hi,\nc,1,assistant,,Greet\n",
        encoding="utf-8",
    )
    with pytest.raises(TestSetError) as caught:
        load_conversations(twice)
    assert str(caught.value) == (
        f"{twice}: no usable conversation\n"
        f"{twice}:2: conversation 'c': turn number [1] given twice; skipped"
    )
    assert is_conversation_header(["Conversation_ID", "turn", "role"])
