"""Found, contradicted or missing: expected claims read against the response with the
real local model and the contradiction rules; abstentions and attribution-only spans."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from engine.embedders.local import LocalEmbedder
from engine.judges.local.judge import LocalJudge
from engine.models import (
    AnalyzerConfig,
    CompletenessConfig,
    ExpectedAnswer,
    ExpectedClaim,
    GroundTruthChunk,
    SampleKey,
    TestCase,
)
from engine.scoring.analyzer import ResponseAnalyzer
from engine.scoring.judging import judge_sample

RESPONSE = (
    "Northwind charges 19.9% EAR on arranged overdrafts. "
    "Accounts opened before March 2021 keep the old rate. "
    "The bank does not charge a monthly account fee. "
    "Customer support is run by Maria Lopez's team in Leeds. "
    "Debit cards earn 1% cashback on groceries."
)
# (id, claim, expected status, expected rule): written from the response above by hand.
CLAIMS = [
    ("num", "An arranged overdraft costs 39.9% EAR.", "contradicted", "number"),
    ("date", "Accounts opened before March 2023 keep the old rate.", "contradicted", "date"),
    ("neg", "The bank charges a monthly account fee.", "contradicted", "negation"),
    ("ent", "Customer support is run by John Smith's team in Leeds.", "contradicted", "entity"),
    ("para", "You get 1% cash back when you pay for groceries by debit card.", "found", None),
    ("same", "Accounts opened before March 2021 keep the old rate.", "found", None),
    ("gone", "Overdraft interest is charged daily and capped at 50 pounds.", "missing", None),
    # Partial: the response states the cashback on groceries, not the one on fuel.
    ("part", "Debit cards earn 1% cashback on groceries and 3% on fuel.", "missing", None),
]


@pytest.fixture(scope="module")
def local() -> Iterator[LocalEmbedder]:
    embedder = LocalEmbedder()
    embedder.load()
    yield embedder


def northwind(claims: bool = True, text: str = "", brands: tuple[str, ...] = ()) -> TestCase:
    return TestCase(
        id="nw1",
        query="How much does an arranged overdraft cost at Northwind?",
        domain="northwind.example",
        brand_names=brands,
        expected_answer=ExpectedAnswer(
            text=text,
            claims=tuple(ExpectedClaim(id=i, text=t) for i, t, _, _ in CLAIMS) if claims else (),
        ),
        ground_truth=(
            GroundTruthChunk(
                chunk_id="p1#0",
                page_url="https://northwind.example/overdrafts",
                text="An arranged overdraft costs 39.9% EAR (variable).",
            ),
        ),
    )


def test_each_state_with_its_rule(local: LocalEmbedder) -> None:
    analysis = ResponseAnalyzer(local, AnalyzerConfig()).analyze(northwind(), RESPONSE)
    got = {m.claim.id: (m.status, m.rule) for m in analysis.completeness.claims}
    assert got == {i: (status, rule) for i, _, status, rule in CLAIMS}
    # 2 of 8 found; contradicted claims count against completeness.
    assert analysis.completeness.score == 25.0
    assert "contradicted_claim" in analysis.flags
    rows = {r.claim_id: r for r in analysis.claim_records(SampleKey(run_id="r", iteration=1,
                                                                     sample_id="nw1"))}  # fmt: skip
    num = rows["num"]
    assert (num.status, num.found, num.rule, num.claims_source) == (
        "contradicted",
        False,
        "number",
        "given",
    )
    # The contradicted claim keeps its evidence span, and it round-trips.
    assert num.evidence is not None and "19.9%" in num.evidence
    assert RESPONSE[num.response_start : num.response_end] == num.evidence
    assert rows["gone"].evidence is None and rows["gone"].status == "missing"
    assert all(r.found == (r.status == "found") for r in rows.values())


def test_issue_example_scores_0735_and_is_contradicted(local: LocalEmbedder) -> None:
    answer = "Northwind charges 19.9% EAR on arranged overdrafts."
    v = local.embed(["An arranged overdraft costs 39.9% EAR", answer])
    assert float(v[0] @ v[1]) == pytest.approx(0.735, abs=0.01)
    case = northwind(claims=False, text="An arranged overdraft costs 39.9% EAR.")
    analysis = ResponseAnalyzer(local, AnalyzerConfig()).analyze(case, answer)
    (match,) = analysis.completeness.claims
    assert (match.status, match.rule, match.source, match.found) == (
        "contradicted", "number", "derived", False
    )  # fmt: skip
    assert analysis.completeness.score == 0.0


def test_switching_the_check_off_counts_the_span_as_found(local: LocalEmbedder) -> None:
    config = AnalyzerConfig(completeness=CompletenessConfig(check_contradictions=False))
    analysis = ResponseAnalyzer(local, config).analyze(
        northwind(claims=False, text="An arranged overdraft costs 39.9% EAR."),
        "Northwind charges 19.9% EAR on arranged overdrafts.",
    )
    assert analysis.completeness.claims[0].status == "found"


def test_derived_claims_fill_completeness_and_rows(local: LocalEmbedder) -> None:
    reference = (
        "Accounts opened before March 2021 keep the old rate and debit cards earn 1% "
        "cashback on groceries. Overdraft interest is charged daily."
    )
    analysis = ResponseAnalyzer(local, AnalyzerConfig()).analyze(
        northwind(claims=False, text=reference), RESPONSE
    )
    rows = analysis.claim_records(SampleKey(run_id="r", iteration=1, sample_id="nw1"))
    assert [(r.claim_text, r.status, r.claims_source) for r in rows] == [
        ("Accounts opened before March 2021 keep the old rate", "found", "derived"),
        ("Debit cards earn 1% cashback on groceries", "found", "derived"),
        ("Overdraft interest is charged daily", "missing", "derived"),
    ]
    assert all(r.claim_id.startswith("d") and len(r.claim_id) == 9 for r in rows)
    assert analysis.completeness.score == 66.67
    assert "no_expected_claims" not in analysis.flags


REFUSAL = "I don't have reliable details about that. You may want to contact Acme Cloud directly."


def acme() -> TestCase:
    return TestCase(
        id="a1",
        query="Does Acme Cloud Vault encrypt backups?",
        domain="acme.com",
        brand_names=("Acme Cloud",),
        expected_answer=ExpectedAnswer(text="Vault encrypts every backup with AES-256."),
        ground_truth=(
            GroundTruthChunk(
                chunk_id="p1#0",
                page_url="https://acme.com/vault",
                text="Acme Cloud Vault encrypts every backup with AES-256. Contact Acme Cloud "
                "support for details about key management.",
            ),
        ),
    )


def test_refusal_is_no_answer_for_the_analyzer(local: LocalEmbedder) -> None:
    analysis = ResponseAnalyzer(local, AnalyzerConfig()).analyze(acme(), REFUSAL)
    fields = analysis.result_fields()
    assert fields["abstained"] is True and "abstained" in fields["flags"]
    assert fields["accuracy"] == 0.0 and fields["completeness"] == 0.0
    assert (
        analysis.highlights.matched == ()
        and analysis.highlight_records(SampleKey(run_id="r", iteration=1, sample_id="a1")) == []
    )
    assert [m.status for m in analysis.completeness.claims] == ["missing"]


def test_refusal_is_never_supported_by_the_judge(local: LocalEmbedder) -> None:
    outcome = asyncio.run(judge_sample(acme(), REFUSAL, LocalJudge(local)))
    assert outcome.checks == () and "abstained" in outcome.flags
    fields = outcome.result_fields()
    assert fields["abstained"] is True and fields["flags"] == ["abstained"]
    assert outcome.verdict_records(SampleKey(run_id="r", iteration=1, sample_id="a1")) == []
    assert outcome.judge_completeness == 1.0 and not outcome.passed
    assert outcome.rag.correctness == 1.0


def test_empty_response_has_no_faithfulness_and_is_flagged_on_both_sides(
    local: LocalEmbedder,
) -> None:
    outcome = asyncio.run(judge_sample(acme(), "", LocalJudge(local)))
    assert outcome.claim_faithfulness is None and outcome.flags == ("empty_response",)
    assert "abstained" not in outcome.result_fields()
    analysis = ResponseAnalyzer(local, AnalyzerConfig()).analyze(acme(), "")
    assert "empty_response" in analysis.flags and analysis.result_fields()["abstained"] is False


def test_a_cited_url_is_attribution_not_unsupported(local: LocalEmbedder) -> None:
    response = "Acme Cloud Vault encrypts every backup with AES-256. Source: https://acme.com/vault"
    analysis = ResponseAnalyzer(local, AnalyzerConfig()).analyze(acme(), response)
    assert "url" in [m.type for m in analysis.attribution.mentions]
    url_start = response.index("https://")
    assert all(s.end <= url_start for s in analysis.not_in_ground_truth)
    assert all(h.end <= url_start for h in analysis.highlights.highlights)
    # The first sentence matches the passage; the citation leaves the denominator.
    assert analysis.highlights.coverage_percent == 100.0


# (claim, verdict, rule) for the judge against RESPONSE as context, written by hand.
JUDGED = [
    ("The arranged overdraft costs 39.9% EAR.", "contradicted", "number"),
    ("Accounts opened before March 2023 keep the old rate.", "contradicted", "date"),
    ("The bank charges a monthly account fee.", "contradicted", "negation"),
    ("Debit cards give you 1% back on grocery shopping.", "supported", None),
    ("Debit cards earn 1% cashback on groceries and 3% on fuel.", "not_enough_info", None),
    ("Savings accounts pay 4% interest.", "not_enough_info", None),
]


@pytest.mark.parametrize(("claim", "verdict", "rule"), JUDGED)
def test_local_judge_states(
    local: LocalEmbedder, claim: str, verdict: str, rule: str | None
) -> None:
    judge = LocalJudge(local)
    result = judge.verify(claim, [RESPONSE])
    assert (result.verdict.lower(), result.rule) == (verdict, rule)


def test_a_refusal_has_no_faithfulness_and_is_not_passed(local: LocalEmbedder) -> None:
    outcome = asyncio.run(judge_sample(acme(), REFUSAL, LocalJudge(local)))
    fields = outcome.result_fields()
    assert fields["judge_faithfulness"] is None and fields["claim_faithfulness"] is None
    assert fields["passed"] is False and fields["overall"] is None
    assert fields["rag_faithfulness"] is None and fields["judge_completeness"] == 1.0


def test_declining_is_right_when_the_reference_declines(local: LocalEmbedder) -> None:
    # Written for this test: the reference says the page does not give the answer.
    case = acme().model_copy(
        update={
            "query": "Which data centre holds Acme Cloud Vault backups?",
            "expected_answer": ExpectedAnswer(
                text="The documentation does not say where backups are stored."
            ),
        }
    )
    answer = "I don't know where the backups are kept; the documentation does not mention it."
    analysis = ResponseAnalyzer(local, AnalyzerConfig()).analyze(case, answer)
    assert analysis.abstained and "abstention_expected" in analysis.flags
    assert analysis.accuracy.score == 100.0
    # The same refusal where the reference answers is still no answer.
    plain = ResponseAnalyzer(local, AnalyzerConfig()).analyze(acme(), answer)
    assert plain.accuracy.score == 0.0 and "abstention_expected" not in plain.flags


def test_completeness_counts_required_claims_only(local: LocalEmbedder) -> None:
    def claims(*importance: str) -> TestCase:
        texts = ("Vault encrypts every backup with AES-256.", "Vault keeps backups for ten years.")
        return acme().model_copy(
            update={
                "expected_answer": ExpectedAnswer(
                    claims=tuple(
                        ExpectedClaim(id=f"c{i}", text=t, importance=imp)  # type: ignore[arg-type]
                        for i, (t, imp) in enumerate(zip(texts, importance, strict=True))
                    )
                )
            }
        )

    answer = "Acme Cloud Vault encrypts every backup with AES-256."
    analyzer = ResponseAnalyzer(local, AnalyzerConfig())
    # found required + missing optional: 1 / 1 counted, the optional one still reported
    one = analyzer.analyze(claims("required", "optional"), answer)
    assert one.completeness.score == 100.0
    assert [m.status for m in one.completeness.claims] == ["found", "missing"]
    assert analyzer.analyze(claims("required", "expected"), answer).completeness.score == 50.0
    only_optional = analyzer.analyze(claims("optional", "optional"), answer)
    assert only_optional.completeness.score is None
    assert "only_optional_claims" in only_optional.flags


def test_an_answer_particle_does_not_hide_the_statement(local: LocalEmbedder) -> None:
    judge = LocalJudge(local)
    context = ["Acme Cloud Vault supports SAML single sign-on on every plan."]
    plain = judge.verify("Acme Cloud Vault supports SAML single sign-on on every plan.", context)
    claims = judge.claims("Yes, Acme Cloud Vault supports SAML single sign-on on every plan.")
    assert [c.text for c in claims.claims] == [
        "Acme Cloud Vault supports SAML single sign-on on every plan"
    ]
    assert plain.verdict == "SUPPORTED"
    assert judge.verify(claims.claims[0].text, context).verdict == "SUPPORTED"
