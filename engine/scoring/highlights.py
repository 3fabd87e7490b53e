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
from collections.abc import Callable, Sequence
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


@dataclass(frozen=True)
class Match:
    """What one response segment matches: a passage and its text, or nothing."""

    chunk: ChunkUnits | None
    matched_text: str | None
    similarity: float
    """Cosine with the matched passage (with the closest passage when unmatched)."""


Matcher = Callable[[Sequence[Segment]], list[Match]]
"""Decides, for response segments, which ground-truth passage each one states."""


def cosine_matcher(chunks: Sequence[ChunkUnits], lookup: Lookup, threshold: float) -> Matcher:
    """The seed's matcher: a segment matches the passage it is closest to when the cosine
    (best unit of the passage) is at least ``threshold``."""

    def match(segments: Sequence[Segment]) -> list[Match]:
        if not segments:
            return []
        best, which = chunk_similarities(lookup([s.key for s in segments]), chunks, lookup)
        out: list[Match] = []
        for index, segment in enumerate(segments):
            j = int(best[index].argmax())
            similarity = round(float(best[index, j]), 4)
            if float(best[index, j]) < threshold:
                out.append(Match(None, None, similarity))
                continue
            units = chunks[j]
            unit = int(which[j][index])
            # Report a sentence, not a long passage: unit 0 is the whole passage.
            if unit == 0 and len(units.keys) > 1:
                unit = 1 + int(np.argmax(best_units(units, segment, lookup)))
            out.append(Match(units, units.texts[unit], similarity))
        return out

    return match


def highlight(
    response: str,
    sentences: Sequence[tuple[Segment, Sequence[Segment]]],
    chunks: Sequence[ChunkUnits],
    lookup: Lookup,
    threshold: float,
    mentions: Sequence[tuple[int, int]] = (),
    matcher: Matcher | None = None,
) -> HighlightResult:
    """Highlight ``sentences`` (each with its clauses) of ``response`` against ``chunks``;
    ``mentions`` are (start, end) offsets of URL, domain and brand mentions. ``matcher``
    decides what each segment states (default: ``cosine_matcher``); the clauses of a sentence
    are tried only when the sentence as a whole matches nothing."""
    if not chunks:
        return HighlightResult((), None, ())
    match = matcher or cosine_matcher(chunks, lookup, threshold)
    cited = [s for s, _ in sentences if attribution_only(s, mentions)]
    kept = [
        (s, [c for c in clauses if not attribution_only(c, mentions)])
        for s, clauses in sentences
        if not attribution_only(s, mentions)
    ]
    if not kept:
        return HighlightResult((), 0.0, ())

    def row(segment: Segment, m: Match) -> Highlight:
        if m.chunk is None:
            return Highlight(segment.start, segment.end, segment.text, None, None, None,
                             m.similarity)  # fmt: skip
        return Highlight(
            segment.start,
            segment.end,
            segment.text,
            m.chunk.chunk.chunk_id,
            m.chunk.chunk.page_url,
            m.matched_text,
            m.similarity,
        )

    whole = match([sentence for sentence, _ in kept])
    retry = [
        k for k, (_, clauses) in enumerate(kept) if whole[k].chunk is None and len(clauses) > 1
    ]
    parts = match([clause for k in retry for clause in kept[k][1]])
    by_sentence: dict[int, list[Highlight]] = {}
    offset = 0
    for k in retry:
        clauses = kept[k][1]
        by_sentence[k] = [
            row(c, m) for c, m in zip(clauses, parts[offset : offset + len(clauses)], strict=True)
        ]
        offset += len(clauses)
    rows: list[Highlight] = []
    unsupported: list[Statement] = []
    for k, (sentence, _) in enumerate(kept):
        first = row(sentence, whole[k])
        pieces = by_sentence.get(k, [])
        if first.chunk_id is not None or not pieces:
            rows.append(first)
        else:
            rows.extend(pieces)
        if all(r.chunk_id is None for r in [first, *pieces]):
            unsupported.append(Statement(sentence.start, sentence.end, sentence.text))
    total = _non_space(response) - sum(_non_space(s.text) for s in cited)
    matched = sum(_non_space(r.text) for r in rows if r.chunk_id is not None)
    coverage = round(matched / total * 100.0, 2) if total else 0.0
    return HighlightResult(tuple(rows), coverage, tuple(unsupported))


def best_units(units: ChunkUnits, segment: Segment, lookup: Lookup) -> np.ndarray:
    """Cosines of ``segment`` with each sentence of a multi-sentence passage."""
    return (lookup(list(units.keys[1:])) @ lookup([segment.key]).T)[:, 0]
