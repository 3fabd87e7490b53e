"""Knowledge retention by what the user's words mean: the attrition example ("my order
number is 12345 ... what is your order number?") and its paraphrases are caught, however
the number was given; replies that repeat the detail correctly, or ask for one never
given, are not attrition."""

from __future__ import annotations

import pytest

from engine.judges.conversation import Said
from engine.scoring.conversation import asked_again
from engine.scoring.retention import user_facts

ASK = "Thanks. Before I look into it, what is your order number?"


@pytest.mark.parametrize(
    "given",
    [
        ["Hi, my order number is 12345 and it has not arrived."],
        ["My order 12345 has not arrived."],
        ["The number of my order was 12345, it never came."],
        ["I have a problem with an order. The number was 12345."],
        ["I have a problem with an order.", "it's 12345"],
        ["I have a problem with an order.", "the number was 12345"],
    ],
)
def test_a_repeated_question_for_an_order_number_is_attrition(given: list[str]) -> None:
    turns = [Said(2 * i + 1, "user", text) for i, text in enumerate(given)]
    # an assistant reply between two user messages, that the second one answers or not
    turns = [t for i, u in enumerate(turns) for t in (u, Said(2 * i + 2, "assistant", "I see."))]
    reply = Said(len(turns) + 1, "assistant", ASK)
    why = asked_again([*turns, reply], reply)
    assert why is not None and why.startswith(f"turn {reply.turn} asks for the order number")


def test_an_answer_to_the_assistant_s_question_is_that_detail() -> None:
    turns = [
        Said(1, "user", "Where is my parcel?"),
        Said(2, "assistant", "Happy to help. What's your order number?"),
        Said(3, "user", "it's 12345"),
        Said(4, "assistant", "Could you repeat your order number?"),
    ]
    assert [(f.detail.kind, f.value, f.turn) for f in user_facts(turns)] == [
        ("order number", "12345", 3)
    ]
    assert asked_again(turns, turns[3]) == "turn 4 asks for the order number given at turn 3"


def test_a_reply_stating_another_value_contradicts_the_user() -> None:
    given = Said(1, "user", "my order number is 12345")
    wrong = Said(2, "assistant", "I found order 12354: it shipped yesterday.")
    assert asked_again([given, wrong], wrong) == (
        "turn 2 states order number 12354, but turn 1 gave 12345"
    )
    right = Said(2, "assistant", "Order #12345 shipped yesterday; tracking number 99887766.")
    assert asked_again([given, right], right) is None


def test_no_attrition_without_the_detail_or_before_it_was_given() -> None:
    # a number that is not said to be the order's, then a fair question
    vague = Said(1, "user", "I bought 3 shirts and 12345 socks.")
    ask = Said(2, "assistant", ASK)
    assert asked_again([vague, ask], ask) is None
    # the order number given only after the question
    assert asked_again([ask, Said(3, "user", "order 12345")], ask) is None
    # another detail given: the e-mail, asked for the order number
    mail = Said(1, "user", "Write to ada@example.com please.")
    assert asked_again([mail, ask], ask) is None
