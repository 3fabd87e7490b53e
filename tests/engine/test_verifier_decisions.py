"""The shipped claim verifier deciding, as a reader would, on pairs written here (never from a
benchmark set): a number swap is contradicted, a paraphrase supported, an unrelated sentence
not supported; short answers read with their question; accuracy below a correct short answer
for any contradiction; greetings are not claims; a correct abstention is credited; refusals
in five languages are no answer."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from engine.embedders.local import LocalEmbedder
from engine.judges.local.abstention import detect_abstention
from engine.judges.local.judge import LocalJudge
from engine.judges.local.texts import claim_spans
from engine.models import AnalyzerConfig, ExpectedAnswer, GroundTruthChunk, TestCase
from engine.scoring.analyzer import ResponseAnalyzer
from engine.verifier.decide import decide_many, rank
from engine.verifier.model import CrossEncoderVerifier, default_verifier


@pytest.fixture(scope="module")
def verifier() -> CrossEncoderVerifier:
    return default_verifier()


@pytest.fixture(scope="module")
def embedder() -> Iterator[LocalEmbedder]:
    e = LocalEmbedder()
    e.load()
    yield e


@pytest.fixture(scope="module")
def analyzer(embedder: LocalEmbedder, verifier: CrossEncoderVerifier) -> ResponseAnalyzer:
    return ResponseAnalyzer(embedder, AnalyzerConfig(), verifier)


def decide(verifier: CrossEncoderVerifier, evidence: str, claim: str) -> str:
    sentences = [s.strip() + "." for s in evidence.split(". ") if s.strip(". ")]
    return decide_many(verifier, [claim], sentences, [rank(claim, sentences, None)])[0].verdict


@pytest.mark.parametrize(
    ("evidence", "claim", "expected"),
    [
        ("Norvik shipped 4.2 million units in 2023.", "Norvik shipped 2.4 million units in 2023.",
         "contradicted"),
        ("The warranty lasts two years from the date of purchase.",
         "The warranty lasts five years from the date of purchase.", "contradicted"),
        ("The clinic is open Monday to Friday from 8 am to 6 pm.",
         "On weekdays the clinic opens at 8 in the morning and closes at 6 in the evening.",
         "supported"),
        ("Refunds are paid within five business days of the request.",
         "You get your money back within five working days.", "supported"),
        ("The museum's collection holds armour from the fifteenth century.",
         "The airport train runs every ten minutes.", "not_supported"),
        ("You can cancel your subscription at any time without a fee.",
         "Subscriptions cannot be cancelled.", "contradicted"),
    ],
)  # fmt: skip
def test_fixed_pairs(
    verifier: CrossEncoderVerifier, evidence: str, claim: str, expected: str
) -> None:
    assert decide(verifier, evidence, claim) == expected


def test_probabilities_are_calibrated_rows(verifier: CrossEncoderVerifier) -> None:
    p = verifier.predict([("A cat sat on the mat.", "A cat is on the mat."), ("x", "y")])
    assert p.shape == (2, 3) and abs(p.sum(axis=1) - 1).max() < 1e-9
    assert verifier.temperature > 0 and verifier.version.startswith("minilm-ce-")


ZEPHYR = "Where is the Zephyr X2 sold?"
ZEPHYR_REF = "The Zephyr X2 is sold in Canada and Peru."
WARRANTY = "What warranty does the Zephyr X2 have?"
WARRANTY_REF = "The Zephyr X2 comes with a two-year warranty."


def short_case(query: str, reference: str) -> TestCase:
    return TestCase(
        id="s1",
        query=query,
        expected_answer=ExpectedAnswer(text=reference),
        ground_truth=(
            GroundTruthChunk(
                chunk_id="p1", page_url="https://z.example/x2", text=f"{ZEPHYR_REF} {WARRANTY_REF}"
            ),
        ),
    )


def test_six_short_answers_rank_as_a_reader_would(analyzer: ResponseAnalyzer) -> None:
    answers = {
        "right, short": (ZEPHYR, ZEPHYR_REF, "Canada and Peru."),
        "right, sentence": (WARRANTY, WARRANTY_REF, "It has a two-year warranty."),
        "half": (ZEPHYR, ZEPHYR_REF, "It is sold in Canada."),
        "wrong country": (ZEPHYR, ZEPHYR_REF, "Canada and Mexico."),
        "wrong warranty": (WARRANTY, WARRANTY_REF, "It has no warranty."),
        "wrong number": (WARRANTY, WARRANTY_REF, "It comes with a five-year warranty."),
    }
    scored = {}
    for name, (q, ref, answer) in answers.items():
        a = analyzer.analyze(short_case(q, ref), answer)
        scored[name] = (a.accuracy.score, a.completeness.score, a.completeness.claims)
    for right in ("right, short", "right, sentence"):
        assert scored[right][1] == 100.0, (right, scored[right])
        assert scored[right][0] >= 85.0, (right, scored[right])
    for wrong in ("wrong warranty", "wrong number"):
        assert scored[wrong][2][0].status == "contradicted", (wrong, scored[wrong])
        assert scored[wrong][0] < 50.0
        assert scored[wrong][0] < scored["right, short"][0]
        assert scored[wrong][0] <= scored["half"][0]
    assert scored["wrong country"][0] < scored["right, short"][0]
    assert scored["half"][0] < scored["right, short"][0]


def test_kept_claim_spans_are_a_new_list_each_time() -> None:
    text = "The Pro plan costs $20 a month; the Team plan costs $50."
    first = claim_spans(text)
    first.clear()  # a caller changing its list must not change the next caller's
    assert [s.text for s in claim_spans(text)] == [
        "The Pro plan costs $20 a month",
        "the Team plan costs $50",
    ]


def test_greetings_thanks_and_offers_of_help_are_not_claims() -> None:
    assert claim_spans("Hello! Thanks for asking.") == []
    spans = claim_spans(
        "Hi there! The Pro plan costs $20 a month. Let me know if you need anything else!"
    )
    assert [s.text for s in spans] == ["The Pro plan costs $20 a month"]
    spans = claim_spans("Here is what I found: support is open 24/7. Sure!")
    assert [s.text for s in spans] == ["support is open 24/7"]
    assert detect_abstention(
        "Hello! Thanks for asking."
    ).abstained  # courtesy alone answers nothing


def test_a_greeting_only_answer_is_no_answer_for_the_judge(
    embedder: LocalEmbedder, verifier: CrossEncoderVerifier
) -> None:
    judge = LocalJudge(embedder, verifier=verifier)
    rubric = judge.rubric("How much is Pro?", ["The Pro plan costs $20 a month."],
                          "Hello! Thanks for asking.")  # fmt: skip
    assert rubric.completeness.score == 1.0 and "declines" in rubric.faithfulness.reasoning


def test_a_correct_abstention_is_credited(analyzer: ResponseAnalyzer) -> None:
    c = TestCase(
        id="a1",
        query="Where are the backups stored?",
        expected_answer=ExpectedAnswer(
            text="The documentation does not say where backups are stored."
        ),
    )
    a = analyzer.analyze(c, "The sources do not say where the backups are kept.")
    assert "abstention_expected" in a.flags
    assert a.completeness.score == 100.0 and a.accuracy.score == 100.0
    assert not a.claims_contradicted


@pytest.mark.parametrize(
    "refusal",
    [
        "I'm afraid I can't give you any details on that.",
        "Lamentablemente no cuento con datos sobre ese producto.",
        "Malheureusement, je ne dispose d'aucune information à ce sujet.",
        "Leider kann ich Ihnen dazu nichts Genaues sagen.",
        "Purtroppo non dispongo di dettagli su questo prodotto.",
        "Infelizmente não consigo informar nada sobre esse produto.",
    ],
)
def test_refusals_in_five_languages_are_no_answer(embedder: LocalEmbedder, refusal: str) -> None:
    assert detect_abstention(refusal, embedder.embed).abstained, refusal


@pytest.mark.parametrize(
    "answer",
    [
        "Das Produkt ist in Kanada und Peru erhältlich.",
        "Il prodotto costa 20 euro al mese.",
        "O plano Pro custa 20 dólares por mês.",
        "No, the plan does not include phone support.",
    ],
)
def test_answers_in_those_languages_are_not_refusals(embedder: LocalEmbedder, answer: str) -> None:
    assert not detect_abstention(answer, embedder.embed).abstained, answer
