"""The ground-truth highlighter: which parts of the response match which passage.

Each response sentence is compared with every ground-truth passage (the whole passage
and each of its sentences). A sentence at or above the threshold is highlighted whole;
otherwise its clauses are tried one by one, so a sentence that mixes a sourced fact with
an invented one is split. Highlight rows never overlap, so coverage is well defined:
non-space characters inside matched rows / non-space characters of the response x 100.

A URL, domain or brand mention credits the source; it is not a claim. A sentence or clause
that says nothing besides its mentions ("Source: https://acme.com/pricing") gets no row,
is never "not in ground truth", and its characters leave the coverage denominator.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.scoring.accuracy import ChunkUnits, Lookup, Segment, chunk_similarities


@dataclass(frozen=True)
class Highlight:
    """A response span and the passage it matches; ``chunk_id`` None when unmatched."""

    start: int
    end: int
    text: str
    chunk_id: str | None
    page_url: str | None
    matched_text: str | None
    """The best-matching sentence of the passage (the passage itself when it is one)."""
    similarity: float
    """Cosine with the matched passage (with the closest passage when unmatched)."""


@dataclass(frozen=True)
class Statement:
    """A response sentence no ground-truth passage supports (``notInGroundTruth``)."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class HighlightResult:
    """Highlights (matched and unmatched rows), coverage and unsupported sentences."""

    highlights: tuple[Highlight, ...]
    coverage_percent: float | None
    """None when the case has no ground truth."""
    not_in_ground_truth: tuple[Statement, ...]

    @property
    def matched(self) -> tuple[Highlight, ...]:
        """Rows that match a passage."""
        return tuple(h for h in self.highlights if h.chunk_id is not None)

    @property
    def unmatched_segments(self) -> tuple[Highlight, ...]:
        """Rows that match no passage."""
        return tuple(h for h in self.highlights if h.chunk_id is None)


def _non_space(text: str) -> int:
    return sum(map(len, text.split()))


_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CITATION_TEXT = """source sources see visit read more details detail info information learn
    find check at on via from the a an for here there our their its website site page link
    official docs documentation reference references according to cited citation available
    please go more full and or"""
_CITATION_WORDS = frozenset(_CITATION_TEXT.split())


def attribution_only(segment: Segment, mentions: Sequence[tuple[int, int]]) -> bool:
    """True when ``segment`` holds a mention and, outside its mentions, only citation words
    ("see", "source", "visit", ...): it credits the source rather than stating a fact."""
    inside = [(max(s, segment.start), min(e, segment.end)) for s, e in mentions]
    inside = [(s, e) for s, e in inside if s < e]
    if not inside:
        return False
    chars = list(segment.text)
    for s, e in inside:
        for i in range(s - segment.start, e - segment.start):
            chars[i] = " "
    rest = [w.lower() for w in _WORD.findall("".join(chars))]
    return all(w in _CITATION_WORDS for w in rest)


def highlight(
    response: str,
    sentences: Sequence[tuple[Segment, Sequence[Segment]]],
    chunks: Sequence[ChunkUnits],
    lookup: Lookup,
    threshold: float,
    mentions: Sequence[tuple[int, int]] = (),
) -> HighlightResult:
    """Highlight ``sentences`` (each with its clauses) of ``response`` against ``chunks``;
    ``mentions`` are (start, end) offsets of URL, domain and brand mentions."""
    if not chunks:
        return HighlightResult((), None, ())
    cited = [s for s, _ in sentences if attribution_only(s, mentions)]
    sentences = [
        (s, [c for c in clauses if not attribution_only(c, mentions)])
        for s, clauses in sentences
        if not attribution_only(s, mentions)
    ]
    segments: list[Segment] = []
    for sentence, clauses in sentences:
        segments.append(sentence)
        if len(clauses) > 1:
            segments.extend(clauses)
    if not segments:
        return HighlightResult((), 0.0, ())
    best, which = chunk_similarities(lookup([s.key for s in segments]), chunks, lookup)

    def row(index: int, segment: Segment) -> Highlight:
        j = int(best[index].argmax())
        similarity = round(float(best[index, j]), 4)
        if float(best[index, j]) < threshold:
            return Highlight(segment.start, segment.end, segment.text, None, None, None, similarity)
        units = chunks[j]
        unit = int(which[j][index])
        # Report a sentence, not a long passage: unit 0 is the whole passage.
        if unit == 0 and len(units.keys) > 1:
            unit = 1 + int(np.argmax(best_units(units, segment, lookup)))
        return Highlight(
            segment.start,
            segment.end,
            segment.text,
            units.chunk.chunk_id,
            units.chunk.page_url,
            units.texts[unit],
            similarity,
        )

    rows: list[Highlight] = []
    unsupported: list[Statement] = []
    index = 0
    for sentence, clauses in sentences:
        whole = row(index, sentence)
        index += 1
        parts = (
            [row(index + k, clause) for k, clause in enumerate(clauses)] if len(clauses) > 1 else []
        )
        index += len(parts)
        if whole.chunk_id is not None or not parts:
            rows.append(whole)
        else:
            rows.extend(parts)
        if all(r.chunk_id is None for r in [whole, *parts]):
            unsupported.append(Statement(sentence.start, sentence.end, sentence.text))
    total = _non_space(response) - sum(_non_space(s.text) for s in cited)
    matched = sum(_non_space(r.text) for r in rows if r.chunk_id is not None)
    coverage = round(matched / total * 100.0, 2) if total else 0.0
    return HighlightResult(tuple(rows), coverage, tuple(unsupported))


def best_units(units: ChunkUnits, segment: Segment, lookup: Lookup) -> np.ndarray:
    """Cosines of ``segment`` with each sentence of a multi-sentence passage."""
    return (lookup(list(units.keys[1:])) @ lookup([segment.key]).T)[:, 0]
