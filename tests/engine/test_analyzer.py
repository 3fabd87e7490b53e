"""The analyzer as the runner calls it: batches, bad input, records, offsets, reanalysis."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from engine.embedders.keyword import KeywordEmbedder
from engine.embedders.local import LocalEmbedder
from engine.models import (
    AnalyzerConfig,
    GroundTruthChunk,
    ResultRecord,
    SampleKey,
)
from engine.scoring.analyzer import Analysis, AnalysisError, ResponseAnalyzer, mask_markup
from tests.engine.test_accuracy import TableEmbedder, case

KEY = SampleKey(run_id="run-1", iteration=1, sample_id="t1")
CLAIMS = [("c1", "Vault costs $12 per user per month.", "required"),
          ("c2", "There is a 30-day free trial.", "required"),
          ("c3", "Support is available around the clock.", "optional")]  # fmt: skip
CHUNKS = [("p1#0", "Acme Vault costs $12 per user per month. Every plan has a 30-day free trial.")]
RESULT_KEYS = {
    "accuracy", "accuracy_tier", "accuracy_similarity", "completeness", "completeness_tier",
    "attribution", "attribution_tier", "coverage_percent", "abstained", "flags",
}  # fmt: skip


@pytest.fixture(scope="module")
def local() -> Iterator[LocalEmbedder]:
    embedder = LocalEmbedder()
    embedder.load()
    yield embedder


def acme(**kw: object):  # type: ignore[no-untyped-def]
    return case("Acme Vault costs $12 per user per month with a 30-day free trial.", CHUNKS,
                CLAIMS, domain="acme.com", brands=("Acme",), **kw)  # type: ignore[arg-type]  # fmt: skip


def test_real_model_end_to_end(local: LocalEmbedder) -> None:
    response = (
        "Acme Vault costs twelve dollars per user each month, and you can try it free "
        "for 30 days. It was founded on the Moon. See https://acme.com/pricing."
    )
    analysis = ResponseAnalyzer(local, AnalyzerConfig()).analyze(acme(), response)
    fields = analysis.result_fields()
    assert set(fields) == RESULT_KEYS
    meta = {"run_id": "r", "iteration": 1, "sample_id": "t1", "domain": "acme.com"}
    ResultRecord(
        **meta,
        ai_provider="x",
        query="q",
        response=response,
        scored_at="2026-01-01T00:00:00",
        **fields,
    )
    assert fields["accuracy"] > 70
    assert [c.claim.id for c in analysis.claims_found] == ["c1", "c2"]
    # Two required claims found, the optional one missing: the spec counts required claims.
    assert fields["completeness"] == 100.0 and fields["attribution"] == 100.0
    assert [s.text for s in analysis.not_in_ground_truth] == ["It was founded on the Moon."]
    assert 0 < fields["coverage_percent"] < 100
    assert analysis.threshold == local.default_threshold and fields["flags"] == []
    for row in analysis.claim_records(KEY):
        if row.found:
            assert response[row.response_start : row.response_end] == row.evidence


def test_batch_embeds_once_and_keeps_errors_in_place() -> None:
    embedder = TableEmbedder({})
    analyzer = ResponseAnalyzer(embedder, AnalyzerConfig())
    items = [(acme(), "Acme is great."), (case(), "Orphan."), (acme(), "Another answer.")]
    results = analyzer.analyze_batch(items)
    assert len(embedder.calls) == 1
    assert len(embedder.calls[0]) == len(set(embedder.calls[0]))
    assert isinstance(results[0], Analysis) and isinstance(results[2], Analysis)
    assert isinstance(results[1], AnalysisError)
    assert "neither ground truth nor an expected answer" in str(results[1])
    with pytest.raises(AnalysisError):
        analyzer.analyze(case(), "Orphan.")


@pytest.mark.parametrize("response", ["", "   \n\t ", "<br><p></p>"])
def test_empty_response_scores_zero_without_embedding(response: str) -> None:
    embedder = TableEmbedder({})
    analysis = ResponseAnalyzer(embedder, AnalyzerConfig()).analyze(acme(), response)
    assert embedder.calls == []
    fields = analysis.result_fields()
    assert (fields["accuracy"], fields["completeness"], fields["attribution"]) == (0.0, 0.0, 0.0)
    assert fields["coverage_percent"] == 0.0 and fields["accuracy_tier"] == "poor"
    assert "empty_response" in fields["flags"]
    assert [r.found for r in analysis.claim_records(KEY)] == [False, False, False]


def test_embedder_failure_falls_back_to_keywords() -> None:
    analyzer = ResponseAnalyzer(TableEmbedder({}, fail=True), AnalyzerConfig())
    analysis = analyzer.analyze(acme(), "Acme Vault costs $12 per user per month.")
    assert "keyword_fallback" in analysis.flags
    assert analysis.embedder == "keyword:hashed-stems"
    assert analysis.threshold == KeywordEmbedder().default_threshold
    assert analysis.completeness.claims[0].found


def test_long_response_is_chunked_and_flagged() -> None:
    sentence = "Acme Vault costs $12 per user per month. "
    response = sentence * 30
    config = AnalyzerConfig(max_response_chars=200)
    analysis = ResponseAnalyzer(KeywordEmbedder(), config).analyze(acme(), response)
    assert "response_truncated" in analysis.flags
    pieces = analysis.accuracy.matched_chunks
    assert len(pieces) > 1 and all(m.response_end - m.response_start <= 200 for m in pieces)
    assert analysis.accuracy.score > 50


def test_markup_is_masked_for_embedding_but_offsets_hit_the_original() -> None:
    response = "<p>**Acme Vault** costs $12 per user\x00 per month.</p>\n# Trial\nA 30-day [free trial](https://acme.com/t)."
    masked, touched = mask_markup(response)
    assert touched and len(masked) == len(response)
    table = {"Acme Vault costs $12 per user per month.": [1, 0], CLAIMS[0][1]: [1, 0]}
    embedder = TableEmbedder(table)
    analysis = ResponseAnalyzer(embedder, AnalyzerConfig()).analyze(
        case("Vault costs $12 per user per month.", CHUNKS, CLAIMS[:1]), response
    )
    assert "malformed_text" in analysis.flags
    assert "Acme Vault costs $12 per user per month." in embedder.calls[0]
    assert not any("<p>" in t or "**" in t or "\x00" in t for t in embedder.calls[0])
    found = analysis.claims_found[0]
    assert response[found.start : found.end] == found.text


def test_reanalyze_links_to_previous() -> None:
    analyzer = ResponseAnalyzer(KeywordEmbedder(), AnalyzerConfig())
    first = analyzer.analyze(acme(), "Acme Vault costs $12 per user per month.")
    new_truth = [
        GroundTruthChunk(chunk_id="p9", page_url="https://acme.com/new", text="Vault is now $15.")
    ]
    second = analyzer.reanalyze(first, acme(), new_truth)
    assert second.reanalysis_of == first.analysis_id != second.analysis_id
    assert {h.chunk_id for h in second.highlights.highlights} <= {"p9", None}
    assert second.response == first.response


def test_records_carry_the_key() -> None:
    analysis = ResponseAnalyzer(KeywordEmbedder(), AnalyzerConfig()).analyze(
        acme(), "Acme says: see acme.com/pricing."
    )
    rows = analysis.attribution_records(KEY)
    assert [(r.type, r.matched_text) for r in rows] == [
        ("brand", "Acme"),
        ("url", "acme.com/pricing"),
    ]
    assert all(r.sample_id == "t1" for r in rows)


_PIECES = [" ", ".", ",", ";", ":", "!", "?", "\n", "\t", "-", "*", "_", "#", ">", "|", "`"]
_PIECES += ["[", "]", "(", ")", "<", "/", "&", "acme.com", "Acme", "<p>", "**", "https://"]
_PIECES += [" and ", "www.", "\x00", "\u200b", "é", "日本"]
_TEXT = st.lists(
    st.one_of(st.text(st.characters(codec="utf-8"), max_size=8), st.sampled_from(_PIECES)),
    max_size=40,
).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(response=_TEXT)
def test_every_offset_round_trips(response: str) -> None:
    analyzer = ResponseAnalyzer(KeywordEmbedder(dim=256), AnalyzerConfig())
    analysis = analyzer.analyze(acme(), response)
    for claim in analysis.claim_records(KEY):
        if claim.found:
            assert response[claim.response_start : claim.response_end] == claim.evidence
    for row in analysis.highlight_records(KEY):
        assert response[row.response_start : row.response_end]
    for h in analysis.highlights.highlights:
        assert response[h.start : h.end] == h.text
    for s in analysis.not_in_ground_truth:
        assert response[s.start : s.end] == s.text
    for a in analysis.attribution_records(KEY):
        assert response[a.response_start : a.response_end] == a.matched_text
    for m in analysis.accuracy.matched_chunks:
        assert response[m.response_start : m.response_end] == m.response_segment
    coverage = analysis.coverage_percent
    assert coverage is not None and 0.0 <= coverage <= 100.0
