"""Accuracy scorer: hand-computed cosines with a table embedder."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

import numpy as np
import pytest

from engine.embedders.base import EmbedderError, Vectors
from engine.models import (
    AccuracyConfig,
    AnalyzerConfig,
    ExpectedAnswer,
    ExpectedClaim,
    GroundTruthChunk,
    TestCase,
)
from engine.scoring.analyzer import ResponseAnalyzer

DIM = 256


class TableEmbedder:
    """Exact vectors for the texts of a table (first 8 dims, normalised); any other text
    gets a pseudo-random vector in dims 8.. (orthogonal to every table vector)."""

    def __init__(
        self, table: Mapping[str, Sequence[float]], threshold: float = 0.7, fail: bool = False
    ) -> None:
        self.table = dict(table)
        self.threshold = threshold
        self.fail = fail
        self.calls: list[list[str]] = []

    @property
    def name(self) -> str:
        return "fake:table"

    @property
    def default_threshold(self) -> float:
        return self.threshold

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        if self.fail:
            raise EmbedderError("service unavailable after 3 attempts")
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for i, text in enumerate(texts):
            if text in self.table:
                v = np.asarray(self.table[text], dtype=np.float64)
                out[i, : len(v)] = v / np.linalg.norm(v)
            else:
                seed = int.from_bytes(hashlib.sha256(text.encode("utf-8", "replace")).digest()[:8])
                v = np.random.default_rng(seed).standard_normal(DIM - 8)
                out[i, 8:] = v / np.linalg.norm(v)
        return out


def case(
    expected: str = "",
    chunks: Sequence[tuple[str, str]] = (),
    claims: Sequence[tuple[str, str, str]] = (),
    domain: str = "",
    brands: Sequence[str] = (),
) -> TestCase:
    """A test case from short tuples: chunks (id, text), claims (id, text, importance)."""
    return TestCase(
        id="t1",
        query="q?",
        domain=domain,
        brand_names=tuple(brands),
        expected_answer=ExpectedAnswer(
            text=expected,
            claims=tuple(ExpectedClaim(id=i, text=t, importance=imp) for i, t, imp in claims),  # type: ignore[arg-type]
        ),
        ground_truth=tuple(
            GroundTruthChunk(chunk_id=c, page_url=f"https://x.example/{c}", text=t)
            for c, t in chunks
        ),
    )


def analyzer(table: Mapping[str, Sequence[float]], **accuracy: str) -> ResponseAnalyzer:
    config = AnalyzerConfig(accuracy=AccuracyConfig(**accuracy))  # type: ignore[arg-type]
    return ResponseAnalyzer(TableEmbedder(table), config)


def test_no_chunking_is_one_cosine() -> None:
    table = {"Expected answer.": [1, 0], "The response.": [0.6, 0.8], "Passage one.": [0, 1]}
    result = analyzer(table).analyze(
        case("Expected answer.", [("p1", "Passage one.")]), "The response."
    )
    assert result.accuracy.score == 60.0
    assert result.accuracy.similarity == pytest.approx(0.6, abs=1e-4)
    assert result.accuracy.tier == "fair"
    assert result.accuracy.reference == "expected_answer"
    (match,) = result.accuracy.matched_chunks
    assert (match.chunk_id, match.similarity) == ("p1", pytest.approx(0.8, abs=1e-4))
    assert (match.response_start, match.response_end) == (0, 13)


RESPONSE = "First one here. Second one here."
TABLE = {
    "Expected answer.": [1, 0, 0],
    "First one here.": [0.8, 0.6, 0],
    "Second one here.": [0, 0, 1],
    RESPONSE: [0.28, 0.96, 0],
    "Chunk A.": [0, 1, 0],
    "Chunk B.": [0, 0, 1],
}


@pytest.mark.parametrize(
    ("chunking", "aggregation", "score", "tier"),
    [
        ("none", "max", 28.0, "poor"),
        ("sentences", "max", 80.0, "good"),
        ("sentences", "mean", 40.0, "poor"),
    ],
)
def test_chunking_and_aggregation(chunking: str, aggregation: str, score: float, tier: str) -> None:
    a = analyzer(TABLE, chunking=chunking, aggregation=aggregation)
    result = a.analyze(case("Expected answer.", [("A", "Chunk A."), ("B", "Chunk B.")]), RESPONSE)
    assert result.accuracy.score == score
    assert result.accuracy.tier == tier


def test_matched_chunks_per_sentence() -> None:
    a = analyzer(TABLE, chunking="sentences")
    result = a.analyze(case("Expected answer.", [("A", "Chunk A."), ("B", "Chunk B.")]), RESPONSE)
    rows = [(m.response_segment, m.chunk_id, m.similarity) for m in result.accuracy.matched_chunks]
    assert rows == [("First one here.", "A", pytest.approx(0.6, abs=1e-4)),
                    ("Second one here.", "B", pytest.approx(1.0, abs=1e-4))]  # fmt: skip


def test_paragraph_chunking() -> None:
    response = "Para one.\n\nPara two."
    table = {"Expected answer.": [1, 0], "Para one.": [0.5, 0.5], "Para two.": [0.9, 0.1]}
    a = analyzer(table, chunking="paragraphs", aggregation="mean")
    result = a.analyze(case("Expected answer.", [("A", "Chunk A.")]), response)
    # cos = 0.5/sqrt(0.5) = 0.70711 and 0.9/sqrt(0.82) = 0.99388; mean 0.85049
    assert result.accuracy.score == 85.05
    assert result.accuracy.tier == "excellent"


def test_negative_cosine_clips_to_zero() -> None:
    table = {"Expected answer.": [1, 0], "Opposite.": [-1, 0]}
    result = analyzer(table).analyze(case("Expected answer.", [("A", "Chunk A.")]), "Opposite.")
    assert result.accuracy.score == 0.0
    assert result.accuracy.similarity == pytest.approx(-1.0, abs=1e-4)


def test_reference_falls_back_to_claims_then_ground_truth() -> None:
    table = {"Claim one. Claim two.": [1, 0], "Answer.": [0.6, 0.8], "Chunk A.": [0, 1]}
    claims = [("c1", "Claim one.", "required"), ("c2", "Claim two.", "optional")]
    by_claims = analyzer(table).analyze(case("", [("A", "Chunk A.")], claims), "Answer.")
    assert by_claims.accuracy.reference == "claims" and by_claims.accuracy.score == 60.0
    by_truth = analyzer(table).analyze(case("", [("A", "Chunk A.")]), "Answer.")
    assert by_truth.accuracy.reference == "ground_truth" and by_truth.accuracy.score == 80.0
    assert "accuracy_vs_ground_truth" in by_truth.flags
