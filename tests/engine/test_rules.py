"""Contradiction rules of the local judge: each fires on its swap and stays silent on a
faithful restatement."""

from __future__ import annotations

import pytest

from engine.judges.local.quantities import quantities
from engine.judges.local.rules import (
    contradiction,
    entity_swap,
    missing_details,
    stem,
    uncovered_parts,
)

FIRES = [
    ("negation", "Acme does not offer a free plan.", "Acme offers a free plan."),
    ("negation", "Acme no longer ships to Canada.", "Acme ships to Canada."),
    ("negation", "The phone ships without a charger.", "The phone ships with a charger."),
    (
        "negation",
        "Version 4.0 still supports Windows 7.",
        "Version 4.0 removes support for Windows 7.",
    ),
    ("negation", "Refunds aren't available.", "Refunds are available within 30 days."),
    ("number", "The Pro plan costs $25 per month.", "The Pro plan costs $20 per month."),
    ("number", "Usage grew 15% in March.", "Usage grew 5% in March."),
    ("unit", "The Pro plan costs €20 per month.", "The Pro plan costs $20 per month."),
    ("unit", "It includes 5 TB of storage.", "It includes 5 GB of storage."),
    ("unit", "It allows 1,000 requests per hour.", "It allows 1,000 requests per minute."),
    ("date", "Acme was founded in 2018.", "Acme was founded in 2019."),
    ("date", "The office is closed on Sunday.", "The office is closed on Saturday."),
    ("date", "Prices changed in March 2020.", "Prices changed in June 2020."),
    ("date", "It has grown since 2019.", "It has grown since 2015."),
    ("entity", "Acme was founded by John Smith.", "Acme was founded by Jane Doe."),
    ("antonym", "Prices increased last year.", "Prices decreased last year."),
    ("antonym", "The plan is free.", "The plan is paid."),
    ("antonym", "Sales fell 8% in the quarter.", "Sales rose 8% in the quarter."),
    ("antonym", "Shipping is included.", "Shipping is excluded."),
]

SILENT = [
    ("Python 3.12 removed distutils.", "It removed the distutils module in Python 3.12."),
    ("The Pro plan costs $20 a month.", "Pro is $20 per month."),
    ("It stores 5000 GB.", "It stores 5 TB."),
    ("Delivery takes three to five days.", "Shipping takes 3 to 5 days."),
    ("Maria Lopez founded the company in 2012.", "The company was founded in 2012 by Maria Lopez."),
    ("Windows 7 is no longer supported.", "Version 4.0 removes support for Windows 7."),
    ("Acme offers a free plan.", "Acme offers a free plan, but it does not include phone support."),
]


@pytest.mark.parametrize(("rule", "claim", "evidence"), FIRES)
def test_rule_fires(rule: str, claim: str, evidence: str) -> None:
    hit = contradiction(claim, evidence)
    assert hit is not None and hit.rule == rule, (claim, evidence, hit)
    assert hit.detail


@pytest.mark.parametrize(("claim", "evidence"), SILENT)
def test_rule_silent_on_restatement(claim: str, evidence: str) -> None:
    assert contradiction(claim, evidence) is None


def test_quantities_normalise_currency_units_and_multipliers() -> None:
    found = {q.text: q for q in quantities("It costs $5 m, weighs 5 m, has 1,000 users and 3.5 GB")}
    assert found["$5 m"].value == 5_000_000 and found["$5 m"].currency == "USD"
    assert found["5 m"].family == "length"
    assert found["1,000"].value == 1000
    assert found["3.5 GB"].base == pytest.approx(3.5e9)
    assert quantities("Founded in 2019.") == ()  # years belong to the date rule


def test_missing_details_and_uncovered_parts() -> None:
    assert missing_details("Acme offers a 30-day trial.", "Acme offers a trial.") == ["30-day"]
    assert missing_details("It launched in 2019.", "It launched recently.") == ["2019"]
    assert missing_details("Acme offers a trial.", "Acme offers a trial.") == []
    assert uncovered_parts(
        "All dishes are vegetarian and gluten-free.", "All dishes are vegetarian."
    ) == ["gluten-free"]
    assert uncovered_parts("Support is by phone and email.", "Support by phone or email.") == []


def test_weekday_plurals_name_the_same_day() -> None:
    assert missing_details("The clinic opens on Friday.", "It opens on Fridays at 9.") == []
    hit = contradiction("The shop is shut on Tuesdays.", "The shop is shut on Thursday.")
    assert hit is not None and hit.rule == "date"


def test_acronym_spelled_out_is_not_a_missing_name() -> None:
    evidence = "Orders ship with a return merchandise authorization number."
    assert missing_details("Every order gets an RMA number.", evidence) == []
    assert contradiction("Every order gets an RMA number.", evidence) is None
    # Initials that do not line up stay missing.
    assert missing_details("Every order gets an XYZ number.", evidence) == ["xyz"]


def test_able_adjectives_meet_their_verb() -> None:
    assert stem("stackable") == stem("stacks") == "stack"
    assert stem("capable") == "capable"  # short words keep their stem
    assert (
        uncovered_parts("The chairs are stackable and light.", "Chairs stack; they are light.")
        == []
    )


def test_or_later_and_or_higher_state_the_same_bound() -> None:
    evidence = "The app needs Android 12 or higher."
    assert uncovered_parts("It runs on Android 12 or later.", evidence) == []
    assert uncovered_parts("It runs on Android 12 or a tablet.", evidence) == ["a tablet"]


def test_entity_swap_reads_evidence_whatever_its_rank() -> None:
    window = "The opera house opened in 1973. It was designed by Jorn Utzon."
    hit = entity_swap(
        "The opera house was designed by Frank Gehry.",
        "It was designed by Jorn Utzon.",
        window,
        window,
    )
    assert hit is not None and hit.rule == "entity" and "gehry" in hit.detail
    # Another topic altogether is not a swap, only missing.
    assert (
        entity_swap(
            "The stadium was funded by Frank Gehry.",
            "It was designed by Jorn Utzon.",
            window,
            window,
        )
        is None
    )
    # A shared version number is a shared topic, not a shared statement.
    ctx = "Release 2.0 drops support for Java 8."
    assert entity_swap("Release 2.0 is written in Kotlin.", ctx, ctx, ctx) is None


def test_an_added_person_is_unsupported_not_a_swap() -> None:
    evidence = "Ada Lovelace published the first algorithm in 1843."
    claim = "She published the first algorithm in 1843 together with Charles Babbage."
    assert contradiction(claim, evidence) is None
    assert "charles" in missing_details(claim, evidence)
