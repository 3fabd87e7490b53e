"""Splitting text into spans that keep their character offsets.

Every span satisfies ``text[span.start:span.end] == span.text``: the analyzer, the
judges and the dashboard highlighter all rely on offsets that round-trip.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    """A slice of a text: ``source[start:end] == text``."""

    start: int
    end: int
    text: str


# A sentence ends at . ! ? (optionally followed by quotes/brackets) before whitespace,
# or at a newline. Abbreviations and decimals ("e.g.", "3.5") are not boundaries
# because the next character is not whitespace or the token is a known abbreviation.
_BOUNDARY = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n+")
_ABBREVIATIONS = frozenset(
    {"e.g", "i.e", "etc", "vs", "mr", "mrs", "ms", "dr", "prof", "inc", "ltd", "co", "corp"}
    | {"st", "no", "approx", "fig", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep"}
    | {"sept", "oct", "nov", "dec", "u.s", "u.k"}
)
_CLAUSE = re.compile(r"[;:]\s+|,\s+(?=(?:and|but|while|whereas|which|so|or|because)\b)|\s+[–—-]\s+")
_WORD = re.compile(r"\S+")


def _trimmed(source: str, start: int, end: int) -> Span | None:
    while start < end and source[start].isspace():
        start += 1
    while end > start and source[end - 1].isspace():
        end -= 1
    if start >= end:
        return None
    return Span(start, end, source[start:end])


def split_sentences(text: str) -> list[Span]:
    """Sentences of ``text`` with offsets; bullet and line breaks also end a sentence."""
    spans: list[Span] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        cut = match.start()
        before = text[start:cut].rstrip("\"')]")
        last_word = before.rsplit(None, 1)[-1].lower().rstrip(".") if before.split() else ""
        if (
            match.group(0).strip() == ""
            and "\n" not in match.group(0)
            and last_word in _ABBREVIATIONS
        ):
            continue
        span = _trimmed(text, start, cut if "\n" in match.group(0) else match.start())
        if span is not None:
            spans.append(span)
        start = match.end()
    tail = _trimmed(text, start, len(text))
    if tail is not None:
        spans.append(tail)
    return [_strip_bullet(text, s) for s in spans]


def _strip_bullet(source: str, span: Span) -> Span:
    m = re.match(r"^(?:[-*•]|\d+[.)])\s+", span.text)
    if not m:
        return span
    start = span.start + m.end()
    return Span(start, span.end, source[start : span.end])


def split_paragraphs(text: str) -> list[Span]:
    """Paragraphs (separated by blank lines) with offsets."""
    spans: list[Span] = []
    start = 0
    for match in re.finditer(r"\n\s*\n", text):
        span = _trimmed(text, start, match.start())
        if span is not None:
            spans.append(span)
        start = match.end()
    tail = _trimmed(text, start, len(text))
    if tail is not None:
        spans.append(tail)
    return spans


def split_clauses(text: str, sentence: Span) -> list[Span]:
    """Sub-sentence clauses of one sentence (at ; : dashes and ', and/but/which ...')."""
    spans: list[Span] = []
    start = sentence.start
    for match in _CLAUSE.finditer(text, sentence.start, sentence.end):
        span = _trimmed(text, start, match.start())
        if span is not None:
            spans.append(span)
        start = match.end()
    tail = _trimmed(text, start, sentence.end)
    if tail is not None:
        spans.append(tail)
    return spans


def word_windows(text: str, sentence: Span, size: int = 8, stride: int = 4) -> list[Span]:
    """Overlapping windows of ``size`` words inside one sentence (empty if it is shorter)."""
    words = list(_WORD.finditer(text, sentence.start, sentence.end))
    if len(words) <= size:
        return []
    out: list[Span] = []
    for i in range(0, len(words) - size + 1, stride):
        start, end = words[i].start(), words[i + size - 1].end()
        out.append(Span(start, end, text[start:end]))
    last_start = words[-size].start()
    if out and out[-1].start != last_start:
        out.append(Span(last_start, words[-1].end(), text[last_start : words[-1].end()]))
    return out


def candidate_spans(text: str) -> list[Span]:
    """Sentences, their clauses and word windows, de-duplicated: where claims are searched."""
    seen: set[tuple[int, int]] = set()
    out: list[Span] = []
    for sentence in split_sentences(text):
        for span in [sentence, *split_clauses(text, sentence), *word_windows(text, sentence)]:
            key = (span.start, span.end)
            if key not in seen:
                seen.add(key)
                out.append(span)
    return out
