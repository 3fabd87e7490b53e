"""Sentence selection and question templates: the offline, deterministic question writer.

A *fact* is a sentence of a chunk that states something checkable: it has a number, a
name or a verb of offering/costing/being, is 6-45 words long and is not a question or a
call to action. A simple question is the fact with its key span (an amount, percentage,
duration, year, count or name) replaced by the matching question words, so the answer
is the span and the fact is the claim (an echo question: "Acme Vault costs how much per
user per month?"). Facts without such a span get "What does <title> say about
<subject>?".
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from engine.testsets.build.pages import Chunk
from engine.text import split_sentences


@dataclass(frozen=True)
class Fact:
    """A checkable sentence and the chunk it comes from."""

    chunk: Chunk
    sentence: str
    score: float


_VERB = re.compile(
    r"\b(is|are|was|were|has|have|offers?|includes?|costs?|provides?|supports?|runs?|"
    r"takes?|lasts?|covers?|comes?|gives?|allows?|requires?|starts?|charges?|can|will|must)\b",
    re.IGNORECASE,
)
_CALL_TO_ACTION = re.compile(
    r"^(click|contact|sign up|subscribe|learn more|read more|call us|email us|see|visit)\b",
    re.IGNORECASE,
)
_SPANS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("how much", re.compile(r"[$€£]\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:million|billion|k)\b)?")),
    ("what percentage", re.compile(r"\b\d+(?:\.\d+)?\s?%")),
    (
        "how long",
        re.compile(r"\b\d+[- ](?:second|minute|hour|day|week|month|year)s?\b", re.IGNORECASE),
    ),
    ("which year", re.compile(r"\b(?:19|20)\d{2}\b")),
    ("how many", re.compile(r"\b\d[\d,]*(?:\.\d+)?\s+(?=[A-Za-z])")),
    # a name after a lower-case word: not the sentence's first word, not inside a name
    ("what", re.compile(r"\b[a-z]+,? ([A-Z][a-zA-Z0-9]+(?: [A-Z][a-zA-Z0-9]+)*)")),
)


def fact_score(sentence: str) -> float:
    """How checkable a sentence is; 0 when it is no fact at all."""
    words = sentence.split()
    if not 6 <= len(words) <= 45 or sentence.rstrip().endswith("?"):
        return 0.0
    if _CALL_TO_ACTION.match(sentence) or not _VERB.search(sentence):
        return 0.0
    score = 1.0
    score += 2.0 if re.search(r"\d", sentence) else 0.0
    score += 1.0 if re.search(r"\s[A-Z][a-z]", sentence) else 0.0
    score -= 0.5 if re.search(r"\b(we|our|you|your)\b", sentence, re.IGNORECASE) else 0.0
    return score


def select_facts(chunks: Sequence[Chunk], per_chunk: int = 2) -> list[Fact]:
    """The best ``per_chunk`` facts of every chunk, in page order."""
    out: list[Fact] = []
    for chunk in chunks:
        scored = []
        for span in split_sentences(chunk.text):
            sentence = span.text.strip()
            score = fact_score(sentence)
            if score > 0:
                scored.append(Fact(chunk, sentence, score))
        best = sorted(scored, key=lambda f: -f.score)[:per_chunk]
        out.extend(f for f in scored if f in best)
    return out


def subject(sentence: str) -> str:
    """The words before the sentence's first verb (at most six), else its first five."""
    match = _VERB.search(sentence)
    words = sentence[: match.start()].split() if match else []
    if not 1 <= len(words) <= 6:
        words = sentence.split()[:5]
    return " ".join(words).strip(" ,;:").rstrip(".")


_COMMON_FIRST = {"the", "a", "an", "this", "these", "all", "every", "each", "our", "your"}


def _lower_first(text: str) -> str:
    """Lower-case a leading article or determiner (names keep their capital)."""
    first, _, rest = text.partition(" ")
    if first.lower() in _COMMON_FIRST:
        return first.lower() + (" " + rest if rest else "")
    return text


def simple_question(fact: Fact) -> tuple[str, str]:
    """(question, answer span) of a fact; the span is '' for the fallback question."""
    body = fact.sentence.rstrip(" .!;:")
    for words, pattern in _SPANS:
        match = pattern.search(body)
        if match is None:
            continue
        start, end = match.span(match.lastindex or 0)  # group 1 when the pattern has one
        span = body[start:end].strip()
        if words == "how many":
            unit = re.match(r"\w+", body[end:])
            if unit is None or unit.group(0).lower() in {"per", "of", "and", "or", "to"}:
                continue
        question = body[:start] + words + " " + body[end:].lstrip()
        question = re.sub(r"\s+", " ", question).strip()
        if question.lower().startswith(words):
            question = question[0].upper() + question[1:]
        return question.rstrip(" ,") + "?", span
    return f"What does {fact.chunk.title} say about {_lower_first(subject(fact.sentence))}?", ""


_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def _is_quantity(text: str, match: re.Match[str]) -> bool:
    """Whether a number stands alone: not inside a word ("B2B"), a ratio or fixed phrase
    ("24/7", "1/2") or a time ("9:30"), where a changed number reads as nonsense ("36/7")
    rather than as a plausible wrong fact."""
    before = text[match.start() - 1] if match.start() else " "
    after = text[match.end()] if match.end() < len(text) else " "
    return not (before.isalnum() or before in "/:" or after in "/:")


def false_premise(fact: Fact) -> tuple[str, str] | None:
    """(question built on a wrong number, the wrong statement) or None without a number.

    The number is changed the way a hallucination changes it: up by half (at least 1; down
    by a third where up would pass 100%), keeping its format, so the premise looks
    plausible and is contradicted by the page.
    """
    body = fact.sentence.rstrip(" .!;:")
    match = next((m for m in _NUMBER.finditer(body) if _is_quantity(body, m)), None)
    if match is None:
        return None
    raw = match.group(0)
    value = float(raw.replace(",", ""))
    if re.fullmatch(r"(19|20)\d{2}", raw):
        wrong = str(int(value) + 3)
    elif "." in raw:
        # A share cannot pass 100%: a raised 99.95% would read as nonsense, so it goes down.
        percent = body[match.end() :].lstrip().startswith("%")
        factor = 1 / 1.5 if percent and value * 1.5 > 100 else 1.5
        wrong = f"{value * factor:.{len(raw.split('.')[1])}f}"
    else:
        wrong = (
            f"{int(value + max(1, value // 2)):,}"
            if "," in raw
            else str(int(value + max(1, value // 2)))
        )
    statement = body[: match.start()] + wrong + body[match.end() :]
    return f"Is it true that {_lower_first(statement)}?", statement


def brand_of(chunks: Sequence[Chunk]) -> str:
    """The brand: the most frequent multi-word name of the chunks, names spelled in the
    pages' domain first ("Harbor Notes" on harbornotes.example); '' when none repeats."""
    counts: Counter[str] = Counter()
    for chunk in chunks:
        for match in re.finditer(r"\b[A-Z][a-zA-Z]+(?: [A-Z][a-zA-Z]+)+", chunk.text):
            name = match.group(0)
            first, _, rest = name.partition(" ")
            if first.lower() in _COMMON_FIRST:
                name = rest  # "The Team" is no name; "Team" is not either, but rarely repeats
                if " " not in name:
                    continue
            counts[name] += 1
    domains = {c.domain.replace(".", "").lower() for c in chunks if c.domain}

    def rank(item: tuple[str, int]) -> tuple[bool, int]:
        joined = item[0].replace(" ", "").lower()
        return any(joined in d for d in domains), item[1]

    common = sorted((i for i in counts.items() if i[1] >= 2), key=rank, reverse=True)
    return common[0][0] if common else ""


OUT_OF_SCOPE_TOPICS: tuple[str, ...] = (
    "a lifetime licence",
    "an on-premise version",
    "a discount for students",
    "a smartwatch app",
    "cryptocurrency payments",
    "a referral bonus",
    "support in Icelandic",
    "a loyalty points scheme",
    "a franchise programme",
    "same-day delivery by drone",
)
"""Offerings a company page seldom mentions: questions the sources cannot answer."""


def out_of_scope_topics(corpus: str) -> list[str]:
    """The topics none of whose key words (longer than 4 letters) occur in the pages."""
    text = corpus.lower()
    out = []
    for topic in OUT_OF_SCOPE_TOPICS:
        keys = [w for w in re.findall(r"[a-z-]+", topic.lower()) if len(w) > 4]
        if not any(k in text for k in keys):
            out.append(topic)
    return out
