"""Abstention detection: refusals, deflections and "I don't know" answers versus answers
that merely sound like them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from engine.embedders.local import LocalEmbedder
from engine.judges.local.abstention import detect_abstention, sentence_kind

ABSTAINS = [
    "I don't have reliable details about that. You may want to contact Acme Cloud directly.",
    "I don't know.",
    "I do not know the answer to that question.",
    "I'm not sure.",
    "I am not certain about this.",
    "Sorry, I can't help with that.",
    "I'm sorry, but I cannot provide that information.",
    "I'm unable to verify the current price. Please check the official website.",
    "I have no information about Northwind's overdraft fees.",
    "I couldn't find any information on that.",
    "The provided context does not contain the answer.",
    "The context doesn't mention the price.",
    "There is no information available about the refund policy.",
    "I have no comment.",
    "I have no idea.",
    "That's beyond my knowledge, unfortunately.",
    "As an AI, I don't have access to real-time pricing.",
    "It is not possible for me to say.",
    "Not sure.",
    "I'd rather not guess.",
    "I would need more information to answer that.",
    "I haven't been given that information. You could ask the sales team.",
    "Unfortunately that information isn't available to me.",
    "Je ne sais pas.",
    "Je n'ai pas d'informations sur ce sujet.",
    "Ich weiß es nicht.",
    "Ich habe keine Informationen dazu.",
    "No lo sé.",
    "No tengo información sobre eso.",
    "Non lo so.",
    "Não sei.",
    "Ik weet het niet.",
]

ANSWERS = [
    "I can't stress enough how cheap it is.",
    "You can't go wrong with the Pro plan.",
    "I cannot recommend the Team plan enough for large groups.",
    "I don't know of any cheaper plan than the $5 Starter plan.",
    "I'm not sure about the date, but the Pro plan costs $20 per month.",
    "Nobody knows for sure where the phrase comes from.",
    "Scientists don't know how the pyramids were built.",
    "We don't offer refunds after 30 days.",
    "We are unable to process refunds after 30 days.",
    "I don't think there is a free plan.",
    "The Pro plan costs $20. Contact sales for volume discounts.",
    "Please contact support to reset your password.",
    "More information is available on the pricing page.",
    "The answer is unknown to historians, but most date it to 1850.",
    "The Pro plan costs $20 per month and includes 100 GB of storage.",
    "You don't need a credit card to start the trial.",
    "The bank cannot charge more than 39.9% EAR.",
    "There is no fee for the first transfer.",
    "Nothing happens if you swallow watermelon seeds.",
    "I know the Pro plan is the best choice for small teams.",
    'George Washington famously said, "I cannot tell a lie"',
]


def test_at_least_thirty_of_each() -> None:
    assert len(ABSTAINS) >= 30 and len(ANSWERS) >= 20
    assert len(ABSTAINS) + len(ANSWERS) >= 50


@pytest.mark.parametrize("text", ABSTAINS)
def test_refusals_abstain_by_rules(text: str) -> None:
    result = detect_abstention(text)
    assert result.abstained, result.kinds
    assert result.reason


@pytest.mark.parametrize("text", ANSWERS)
def test_answers_do_not_abstain(text: str) -> None:
    assert not detect_abstention(text).abstained


def test_deflection_alone_is_not_an_abstention() -> None:
    assert sentence_kind("You may want to contact Acme Cloud directly.") == "deflect"
    assert not detect_abstention("You may want to contact Acme Cloud directly.").abstained


def test_one_content_sentence_is_an_answer() -> None:
    text = "I'm not sure about the trial. The Pro plan costs $20 per month."
    result = detect_abstention(text)
    assert result.kinds == ("abstain", "content") and not result.abstained


def test_empty_is_not_an_abstention() -> None:
    assert not detect_abstention("").abstained and detect_abstention("  ").kinds == ()


@pytest.fixture(scope="module")
def local() -> Iterator[LocalEmbedder]:
    embedder = LocalEmbedder()
    embedder.load()
    yield embedder


# Worded unlike the rules: only the embedding prototypes catch them.
PARAPHRASED = [
    "That is outside what I know.",
    "I'm afraid I can't say.",
    "This is not something I can speak to.",
]


@pytest.mark.parametrize("text", PARAPHRASED)
def test_prototypes_catch_refusals_the_rules_miss(local: LocalEmbedder, text: str) -> None:
    assert detect_abstention(text, local.embed).abstained


@pytest.mark.parametrize("text", ANSWERS)
def test_prototypes_leave_answers_alone(local: LocalEmbedder, text: str) -> None:
    assert not detect_abstention(text, local.embed).abstained
