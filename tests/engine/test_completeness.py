"""Completeness scorer: claims found/missing with exact cosines and offsets."""

from __future__ import annotations

import pytest

from engine.models import AnalyzerConfig, CompletenessConfig, SampleKey
from engine.scoring.analyzer import ResponseAnalyzer
from tests.engine.test_accuracy import TableEmbedder, case

RESPONSE = "Alpha is here. Beta is there."
TABLE = {
    "Alpha is here.": [1, 0, 0],
    "Beta is there.": [0, 0.6, 0.8],
    "Claim alpha.": [1, 0, 0],
    "Claim beta.": [0, 0, 1],
    "Claim gamma.": [0, 1, 0],
}
CLAIMS = [
    ("c1", "Claim alpha.", "required"),
    ("c2", "Claim beta.", "expected"),
    ("c3", "Claim gamma.", "required"),
]


def run(threshold: float | None, require_all: bool = False, claims=CLAIMS):  # type: ignore[no-untyped-def]
    config = AnalyzerConfig(
        # Cosine mechanics only: the lexical gate is tested on its own below.
        completeness=CompletenessConfig(
            similarity_threshold=threshold,
            require_all_required=require_all,
            require_shared_word=False,
        )
    )
    analyzer = ResponseAnalyzer(TableEmbedder(TABLE, threshold=0.55), config)
    return analyzer, analyzer.analyze(case("Expected.", [("A", "Chunk A.")], claims), RESPONSE)


def test_found_and_missing_at_075() -> None:
    analyzer, result = run(0.75)
    assert analyzer.threshold == 0.75
    c = result.completeness
    assert [m.found for m in c.claims] == [True, True, False]
    assert c.score == 66.67 and c.tier == "fair"
    assert (c.total, c.total_found) == (3, 2)
    alpha, beta, gamma = c.claims
    assert (alpha.start, alpha.end, alpha.text, alpha.similarity) == (0, 14, "Alpha is here.", 1.0)
    assert (beta.start, beta.end, beta.similarity) == (15, 29, pytest.approx(0.8, abs=1e-4))
    assert RESPONSE[beta.start : beta.end] == beta.text
    assert gamma.similarity == pytest.approx(0.6, abs=1e-4) and gamma.text is None
    assert c.missing_required
    assert [m.claim.importance for m in result.claims_missing] == ["required"]
    assert "missing_required_claim" not in result.flags


def test_embedder_default_threshold_when_not_configured() -> None:
    analyzer, result = run(None)
    assert analyzer.threshold == 0.55
    assert result.completeness.score == 100.0 and result.completeness.tier == "excellent"


def test_require_all_required_flags() -> None:
    _, result = run(0.75, require_all=True)
    assert "missing_required_claim" in result.flags
    _, fine = run(0.75, require_all=True, claims=CLAIMS[:2])
    assert "missing_required_claim" not in fine.flags and fine.completeness.score == 100.0


def test_no_claims_gives_null_score() -> None:
    _, result = run(0.75, claims=[])
    assert result.completeness.score is None and result.completeness.tier is None
    assert "no_expected_claims" in result.flags
    assert result.result_fields()["completeness"] is None


def test_claim_records() -> None:
    _, result = run(0.75)
    key = SampleKey(run_id="r1", iteration=2, sample_id="t1")
    rows = result.claim_records(key)
    assert [(r.claim_id, r.found, r.evidence, r.response_start) for r in rows] == [
        ("c1", True, "Alpha is here.", 0),
        ("c2", True, "Beta is there.", 15),
        ("c3", False, None, None),
    ]
    assert all(r.run_id == "r1" and r.iteration == 2 for r in rows)


def test_the_full_claim_check_rejects_a_span_without_the_claims_number() -> None:
    from engine.models import ExpectedAnswer, ExpectedClaim, GroundTruthChunk, TestCase

    response = "Acme Vault comes with a 30-day free trial."
    table = {
        response: [1.0, 0.0],
        "Acme Vault has AES-256 encryption at rest.": [0.62, 0.7846],  # cosine 0.62
    }
    test_case = TestCase(
        id="t",
        query="q",
        expected_answer=ExpectedAnswer(
            claims=(ExpectedClaim(id="enc", text="Acme Vault has AES-256 encryption at rest."),)
        ),
        ground_truth=(GroundTruthChunk(chunk_id="p", text=response),),
    )
    config = AnalyzerConfig(
        completeness=CompletenessConfig(similarity_threshold=0.55, require_shared_word=False)
    )
    result = ResponseAnalyzer(TableEmbedder(table, threshold=0.55), config).analyze(
        test_case, response
    )
    (match,) = result.completeness.claims
    assert (match.status, match.found, match.text) == ("missing", False, None)
    assert match.similarity == pytest.approx(0.62, abs=1e-3)


def test_a_shared_brand_name_alone_does_not_state_a_claim() -> None:
    from engine.models import ExpectedAnswer, ExpectedClaim, GroundTruthChunk, TestCase

    response = "Acme Vault comes with a 30-day free trial."
    table = {
        "Acme Vault comes with a 30-day free trial.": [1.0, 0.0],
        "Acme Vault has AES-256 encryption at rest.": [0.62, 0.7846],  # cosine 0.62
        "Acme Vault offers a free trial for 30 days.": [0.9, 0.4359],
    }
    claims = (
        ExpectedClaim(id="enc", text="Acme Vault has AES-256 encryption at rest."),
        ExpectedClaim(id="trial", text="Acme Vault offers a free trial for 30 days."),
    )
    test_case = TestCase(
        id="t",
        domain="acme.example",
        query="q",
        brand_names=("Acme Vault",),
        expected_answer=ExpectedAnswer(text="", claims=claims),
        ground_truth=(GroundTruthChunk(chunk_id="p", text=response),),
    )
    for gate, found in ((True, [False, True]), (False, [True, True])):
        # The word gate alone: the full-claim check (AES-256 is absent from the response)
        # would also reject the first claim, and is tested in test_claim_states.py.
        config = AnalyzerConfig(
            completeness=CompletenessConfig(
                similarity_threshold=0.55, require_shared_word=gate, check_contradictions=False
            )
        )
        result = ResponseAnalyzer(TableEmbedder(table, threshold=0.55), config).analyze(
            test_case, response
        )
        assert [m.found for m in result.completeness.claims] == found
        # the closest span is reported even when it cannot count
        assert result.completeness.claims[0].similarity == pytest.approx(0.62, abs=1e-3)
