"""Highlighter: sentence and clause matches, coverage, notInGroundTruth, offsets."""

from __future__ import annotations

import pytest

from engine.models import AnalyzerConfig, CompletenessConfig, SampleKey
from engine.scoring.analyzer import ResponseAnalyzer
from tests.engine.test_accuracy import TableEmbedder, case

RESPONSE = "Sun is hot. Sea is wet, and cats fly. Moon is cheese."
TABLE = {
    "Sun is hot.": [1, 0, 0, 0],
    "Sea is wet, and cats fly.": [0.5, 0.5, 0.5, 0.5],
    "Sea is wet": [0, 0.8, 0.6, 0],
    "and cats fly.": [0, 0, 0, 1],
    "Moon is cheese.": [0, 0, 0, 1],
    # Passage g1 has two sentences: the highlighter reports the better one.
    "The sun is very hot. It shines daily.": [0.9, 0.1, 0, 0],
    "The sun is very hot.": [1, 0, 0, 0],
    "It shines daily.": [0.1, 0.9, 0, 0],
    "Water is wet.": [0, 1, 0, 0],
}
CHUNKS = [("g1", "The sun is very hot. It shines daily."), ("g2", "Water is wet.")]


def analyze(response: str = RESPONSE):  # type: ignore[no-untyped-def]
    config = AnalyzerConfig(completeness=CompletenessConfig(similarity_threshold=0.75))
    return ResponseAnalyzer(TableEmbedder(TABLE), config).analyze(
        case("Expected.", CHUNKS), response
    )


def test_rows_coverage_and_unsupported() -> None:
    result = analyze()
    rows = [
        (h.text, h.chunk_id, h.matched_text, h.similarity) for h in result.highlights.highlights
    ]
    assert rows == [
        ("Sun is hot.", "g1", "The sun is very hot.", pytest.approx(1.0, abs=1e-4)),
        ("Sea is wet", "g2", "Water is wet.", pytest.approx(0.8, abs=1e-4)),
        ("and cats fly.", None, None, pytest.approx(0.0, abs=1e-4)),
        ("Moon is cheese.", None, None, pytest.approx(0.0, abs=1e-4)),
    ]
    g1 = result.highlights.highlights[0]
    assert g1.page_url == "https://x.example/g1"
    # non-space characters: "Sun is hot." 9, "Sea is wet" 8, response 42 -> 17/42
    assert result.coverage_percent == round(17 / 42 * 100, 2) == 40.48
    assert [s.text for s in result.not_in_ground_truth] == ["Moon is cheese."]
    for h in result.highlights.highlights:
        assert RESPONSE[h.start : h.end] == h.text
    for s in result.not_in_ground_truth:
        assert RESPONSE[s.start : s.end] == s.text
    assert [h.text for h in result.highlights.unmatched_segments] == [
        "and cats fly.",
        "Moon is cheese.",
    ]


def test_full_coverage_and_records() -> None:
    result = analyze("Sun is hot.")
    assert result.coverage_percent == 100.0
    rows = result.highlight_records(SampleKey(run_id="r", iteration=1, sample_id="t1"))
    assert [(r.response_start, r.response_end, r.chunk_id) for r in rows] == [(0, 11, "g1")]


def test_no_ground_truth_means_no_highlights() -> None:
    config = AnalyzerConfig()
    result = ResponseAnalyzer(TableEmbedder(TABLE), config).analyze(
        case("Expected."), "Sun is hot."
    )
    assert result.highlights.highlights == () and result.coverage_percent is None
    assert "no_ground_truth" in result.flags
