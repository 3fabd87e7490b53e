"""Offline test-set questions read as a person would write them: the fact's key span
becomes the question word and the verb moves as English moves it; no question names a page
title or uses a fill-in template ("If X matters to you, what does About X say...")."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from engine.settings import Paths
from engine.testsets.build.facts import Fact, false_premise
from engine.testsets.build.pages import Chunk
from engine.testsets.build.phrasing import question_for, topic, yes_no
from evalhouse.cli import main

PAGES = Path(__file__).resolve().parents[1] / "data" / "pages" / "site"


@pytest.mark.parametrize(
    ("sentence", "question", "span"),
    [
        ("The Team plan costs $14 per user per month and adds shared notebooks.",
         "How much does the Team plan cost per user per month?", "$14"),
        ("Harbor Notes was founded in 2016 by Mira Okafor in Lisbon.",
         "When was Harbor Notes founded?", "2016"),
        ("The company now has 85 employees across Lisbon and Toronto.",
         "How many employees does the company now have across Lisbon and Toronto?", "85"),
        ("Cobalt Bikes has dealers in 14 countries.",
         "In how many countries does Cobalt Bikes have dealers?", "14"),
        ("Birchwood Account has FDIC insurance up to $250,000.",
         "How much FDIC insurance does Birchwood Account have?", "$250,000"),
        ("Acme Vault offers 99.95% uptime SLA.", "What uptime SLA does Acme Vault offer?",
         "99.95%"),
        ("Refunds take 14 days to arrive.", "How long do refunds take?", "14 days"),
        ("Harbor Notes support is available by chat from 8am to 8pm on weekdays.",
         "Is Harbor Notes support available by chat from 8am to 8pm on weekdays?", ""),
        ("Acme Vault includes single sign-on with SAML and OIDC.",
         "What does Acme Vault include?", ""),
        ("Acme Cloud provides 24/7 phone and chat support.", "What does Acme Cloud provide?", ""),
        ("You can cancel at any time from the billing page.",
         "Can I cancel at any time from the billing page?", ""),
        ("Acme Vault comes with a 30-day free trial.", "What does Acme Vault come with?", ""),
    ],
)  # fmt: skip
def test_a_fact_becomes_the_question_a_person_asks(sentence: str, question: str, span: str) -> None:
    assert question_for(sentence) == (question, span)


def test_a_false_premise_is_asked_the_way_a_doubtful_person_asks() -> None:
    assert yes_no("The Team plan costs $21 per user per month") == (
        "Does the Team plan really cost $21 per user per month?"
    )
    assert yes_no("The chat support is available from 12am to 8pm") == (
        "Is the chat support really available from 12am to 8pm?"
    )
    # a wrong number outside the first clause is kept: the sentence is quoted
    assert yes_no("The Solo plan costs $8 per month and includes 75 GB of storage") == (
        "I read that the Solo plan costs $8 per month and includes 75 GB of storage. Is that right?"
    )
    assert topic("The company now has 85 employees.") == "the company"


@pytest.mark.parametrize(
    ("sentence", "statement"),
    [
        ("Acme Cloud provides 24/7 support for 3 plans.",
         "Acme Cloud provides 24/7 support for 4 plans"),
        ("Acme Cloud provides 24/7 phone and chat support.", None),
        ("The B2B plan opens at 9:30 and costs $40.", "The B2B plan opens at 9:30 and costs $60"),
        ("Harbor Notes was founded in 2016.", "Harbor Notes was founded in 2019"),
        ("Acme Vault offers 12.5% off.", "Acme Vault offers 18.8% off"),
        ("Acme Vault offers 99.95% uptime.", "Acme Vault offers 66.63% uptime"),
    ],
)  # fmt: skip
def test_a_false_premise_changes_a_quantity_never_a_fixed_phrase(
    sentence: str, statement: str | None
) -> None:
    chunk = Chunk("p#0", "https://acme.example/", "Acme", sentence, "acme.example")
    premise = false_premise(Fact(chunk, sentence, 1.0))
    assert (premise[1] if premise else None) == statement


def test_generated_questions_name_no_page_and_use_no_template(home: Paths, tmp_path: Path) -> None:
    out = tmp_path / "g.jsonl"
    assert main(["testset", "from-pages", str(PAGES), "--home", str(home.home), "--count", "30",
                 "--output", str(out)]) == 0  # fmt: skip
    cases = [json.loads(line) for line in out.read_text().splitlines()]
    titles = {g["page_url"] for c in cases for g in c["ground_truth"]}
    assert len(cases) >= 15 and titles
    opening = re.compile(r"^(How|What|When|Which|Where|Who|Why|Is|Are|Was|Were|Do|Does|Did|"
                         r"Can|Will|Must|In how|I'm|I read)\b")  # fmt: skip
    for case in cases:
        query = str(case["query"])
        assert opening.match(query), query
        assert query.endswith("?"), query
        for template in ("matters to you", " say about ", "according to", "how much per",
                         " costs how much", "in which year", "Is it true that"):  # fmt: skip
            assert template not in query, query
        assert not re.search(r"\b(About|Plans and prices|Getting help)\b", query), query
