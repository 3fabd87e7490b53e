"""Accuracy: how close the response is to the expected answer, by embedding cosine.

This module also holds the small types every scorer shares: a ``Segment`` (a span of the
response with the text that is embedded for it), a ``Lookup`` (texts -> unit vectors, the
analyzer's one-pass embedding table) and ``ChunkUnits`` (a ground-truth passage with its
sentences, so long passages can be matched sentence by sentence).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from engine.embedders.base import Vectors
from engine.models import AnalyzerConfig, GroundTruthChunk, Tier

Lookup = Callable[[Sequence[str]], Vectors]
"""Unit vectors of the given (embedding) texts, one row each."""


@dataclass(frozen=True)
class Segment:
    """A span of the response: ``response[start:end] == text``; ``key`` is what is embedded
    (the same span with markup masked and whitespace collapsed)."""

    start: int
    end: int
    text: str
    key: str


@dataclass(frozen=True)
class ChunkUnits:
    """A ground-truth passage and the texts it is matched by: the whole passage first,
    then its sentences when it has more than one."""

    chunk: GroundTruthChunk
    keys: tuple[str, ...]
    texts: tuple[str, ...]


@dataclass(frozen=True)
class ChunkMatch:
    """The ground-truth passage closest to one response segment."""

    response_start: int
    response_end: int
    response_segment: str
    chunk_id: str | None
    """Best passage; None when the case has no ground truth."""
    similarity: float
    """Cosine of the segment and that passage (best unit of the passage)."""


@dataclass(frozen=True)
class AccuracyResult:
    """Accuracy of a response (spec: score, tier, raw similarity, matched chunks)."""

    score: float
    """0-100: the aggregated cosine, negatives clipped to 0."""
    tier: Tier
    similarity: float
    """The aggregated raw cosine (may be negative)."""
    matched_chunks: tuple[ChunkMatch, ...]
    reference: Literal["expected_answer", "claims", "ground_truth", "none"]
    """What the response was compared with."""
    similarity_score: float | None = None
    """The seed's score (the cosine on 0-100) before ``claim_adjusted``; None when equal."""

    @property
    def seed_score(self) -> float:
        """The seed's similarity score, kept as its own column (``accuracy_similarity``)."""
        return self.score if self.similarity_score is None else self.similarity_score


CONTRADICTED_CAP = 40.0
"""The most accuracy an answer that contradicts a counted reference claim gets (poor): a
wrong fact worded like the reference embeds close to it (an answer naming the wrong product
scored 92, excellent), and must never rank above a correct short answer."""


def claim_adjusted(
    result: AccuracyResult, counted: int, found: int, contradicted: int, config: AnalyzerConfig
) -> AccuracyResult:
    """Accuracy that reads the reference's claims as well as the cosine:

        accuracy = max(similarity, 100 x found / counted) x (1 - contradicted / counted),
        at most ``CONTRADICTED_CAP`` when any claim is contradicted.

    A short answer that states every claim ("Canada and Peru." to "Where is it sold?") is
    fully accurate however far its wording is from the reference; one that contradicts a
    claim is poor however close its wording is. Without counted claims the cosine stands.
    """
    if counted <= 0:
        return result
    score = max(result.score, 100.0 * found / counted) * (1.0 - contradicted / counted)
    if contradicted:
        score = min(score, CONTRADICTED_CAP)
    score = round(score, 2)
    return AccuracyResult(
        score,
        config.tiers.tier(score),
        result.similarity,
        result.matched_chunks,
        result.reference,
        result.score,
    )


def similarity_score(cosine: float) -> float:
    """A cosine as a 0-100 score, negatives clipped to 0, rounded to 2 decimals."""
    return round(min(1.0, max(0.0, cosine)) * 100.0, 2)


def chunk_similarities(
    segment_vectors: Vectors, chunks: Sequence[ChunkUnits], lookup: Lookup
) -> tuple[np.ndarray, list[np.ndarray]]:
    """(segments x chunks) best cosine of each segment to each passage, and per passage the
    index of its best unit for every segment (to report the matched sentence)."""
    best = np.zeros((segment_vectors.shape[0], len(chunks)), dtype=np.float32)
    which: list[np.ndarray] = []
    if not chunks or segment_vectors.shape[0] == 0:
        return best, which
    all_keys = [key for chunk in chunks for key in chunk.keys]
    sims = segment_vectors @ lookup(all_keys).T
    offset = 0
    for j, chunk in enumerate(chunks):
        part = sims[:, offset : offset + len(chunk.keys)]
        offset += len(chunk.keys)
        index = part.argmax(axis=1)
        which.append(index)
        best[:, j] = part[np.arange(part.shape[0]), index]
    return best, which


def score_accuracy(
    segments: Sequence[Segment],
    reference_keys: Sequence[str],
    reference: Literal["expected_answer", "claims", "ground_truth"],
    chunks: Sequence[ChunkUnits],
    lookup: Lookup,
    config: AnalyzerConfig,
) -> AccuracyResult:
    """Cosine of each response segment with the reference (best reference text when there
    are several), aggregated by ``config.accuracy.aggregation``; plus, per segment, the
    closest ground-truth passage."""
    if not segments or not reference_keys:
        return AccuracyResult(0.0, config.tiers.tier(0.0), 0.0, (), "none")
    vectors = lookup([s.key for s in segments])
    per_segment = (vectors @ lookup(reference_keys).T).max(axis=1)
    if config.accuracy.aggregation == "mean":
        cosine = float(per_segment.mean())
    else:
        cosine = float(per_segment.max())
    score = similarity_score(cosine)
    best, _ = chunk_similarities(vectors, chunks, lookup)
    matches: list[ChunkMatch] = []
    for i, segment in enumerate(segments):
        if chunks:
            j = int(best[i].argmax())
            chunk_id: str | None = chunks[j].chunk.chunk_id
            similarity = round(float(best[i, j]), 4)
        else:
            chunk_id, similarity = None, 0.0
        matches.append(ChunkMatch(segment.start, segment.end, segment.text, chunk_id, similarity))
    return AccuracyResult(
        score, config.tiers.tier(score), round(cosine, 4), tuple(matches), reference
    )
