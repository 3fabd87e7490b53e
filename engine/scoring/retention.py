"""Knowledge retention, read locally: the facts a user gave (order number, e-mail, phone,
name, account, address) and the replies that ask for one again or state it differently.

A fact is read by what it means in the dialogue, not by one sentence pattern: a value of a
detail's shape (digits for an order number, an address with an @ for an e-mail) is that
detail when the same sentence names the detail anywhere ("my order number is 12345",
"order 12345", "the number of my order was 12345"), or when it answers the detail the
conversation is about: the one the assistant's previous turn asked for ("What is your order
number?" -> "it's 12345"), or one the user named earlier in the same message or in the
previous user message ("I have a question about an order. The number was 12345."). Values
that say what they are (``#12345``, ``ada@example.com``, a long phone number, "my name is")
are facts on their own.

Attrition is a reply that asks, in a question, for a detail a user already gave, or that
states the detail with another value than the one given ("order 12354" after "order
12345"): both make the user repeat themselves.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from engine.judges.conversation import Said


@dataclass(frozen=True)
class Detail:
    """A kind of detail a user gives: how it is named, shaped, asked for."""

    kind: str
    asked: re.Pattern[str]
    """A question asking for it."""
    named: re.Pattern[str] | None = None
    """Words naming it in a sentence ("order", "account")."""
    value: re.Pattern[str] | None = None
    """The shape of its value (group ``v``)."""
    alone: re.Pattern[str] | None = None
    """A form that says on its own that it is this detail (``#12345``, an e-mail)."""


_DIGITS = re.compile(r"(?<![\w@.])#?\s?(?P<v>[A-Z]{0,4}-?\d{3,}[A-Z\d-]*)(?![\w@])")

DETAILS: tuple[Detail, ...] = (
    Detail(
        "order number",
        asked=re.compile(
            r"\b(?:order|reference|confirmation) (?:number|no\b|id\b|#)|\bwhich order\b"
            r"|\b(?:the|that|your) (?:order )?number again\b",
            re.IGNORECASE,
        ),
        named=re.compile(r"\border\b|\bpurchase\b", re.IGNORECASE),
        value=_DIGITS,
        alone=re.compile(r"#\s?\d{3,}"),
    ),
    Detail(
        "e-mail address",
        asked=re.compile(r"\be-?mail\b", re.IGNORECASE),
        value=re.compile(r"(?P<v>[\w.+-]+@[\w-]+\.[\w.-]*\w)"),
        alone=re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+"),
    ),
    Detail(
        "phone number",
        asked=re.compile(r"\bphone\b|\bnumber (?:to|where) (?:we|i) can reach\b", re.IGNORECASE),
        alone=re.compile(r"\+?\d[\d ().-]{7,}\d"),
    ),
    Detail(
        "name",
        asked=re.compile(r"\byour (?:full )?name\b|\bwho am i speaking\b", re.IGNORECASE),
        alone=re.compile(r"\bmy name is\b|\bthis is [A-Z][a-z]+\b", re.IGNORECASE),
    ),
    Detail(
        "account number",
        asked=re.compile(r"\baccount (?:number|no\b|id\b)", re.IGNORECASE),
        named=re.compile(r"\baccount\b", re.IGNORECASE),
        value=_DIGITS,
    ),
    Detail(
        "address",
        asked=re.compile(r"\b(?:shipping |home |delivery )?address\b", re.IGNORECASE),
        alone=re.compile(
            r"\b\d+ \w+(?: \w+)? (?:street|st|road|rd|avenue|ave|lane|ln)\b", re.IGNORECASE
        ),
    ),
)
"""The details the local judge follows."""

_SENTENCE = re.compile(r"(?:[^.!?\n]|[.!?](?=\S))+[.!?]?")
"""A sentence ends at . ! ? before a space or the end (not inside ``ada@example.com``)."""
_QUESTION = re.compile(r"[^.!?\n]*\?")
_NEAR_AFTER = 40
"""Characters after a detail's name in which a reply's value is read as that detail's
(further on, a number is likely another thing: a tracking or ticket number)."""


@dataclass(frozen=True)
class Fact:
    """A detail a user gave at one turn, with its value when it has one."""

    detail: Detail
    turn: int
    value: str = ""


def _sentences(text: str) -> list[str]:
    return [m.group(0) for m in _SENTENCE.finditer(text) if m.group(0).strip()]


def _questions(text: str) -> str:
    return " ".join(m.group(0) for m in _QUESTION.finditer(text))


def _context(turns: Sequence[Said], position: int) -> set[str]:
    """Details the user message at ``position`` may be answering: the ones the previous
    assistant turn asked for, and the ones the previous user message named."""
    kinds: set[str] = set()
    for earlier in reversed(turns[:position]):
        if earlier.role == "assistant" and not kinds:
            questions = _questions(earlier.content)
            kinds |= {d.kind for d in DETAILS if d.asked.search(questions)}
        elif earlier.role == "user":
            kinds |= {d.kind for d in DETAILS if d.named and d.named.search(earlier.content)}
            break
    return kinds


def user_facts(turns: Sequence[Said]) -> list[Fact]:
    """Every fact the user messages of ``turns`` give, in order."""
    facts: list[Fact] = []
    for position, said in enumerate(turns):
        if said.role != "user":
            continue
        about = _context(turns, position)
        for sentence in _sentences(said.content):
            for detail in DETAILS:
                if detail.named and detail.named.search(sentence):
                    about.add(detail.kind)
                values = (
                    [m.group("v") for m in detail.value.finditer(sentence)] if detail.value else []
                )
                if values and detail.kind in about:
                    facts += [Fact(detail, said.turn, v) for v in values]
                elif detail.alone and detail.alone.search(sentence):
                    facts.append(Fact(detail, said.turn, values[0] if values else ""))
    return facts


def _stated_values(detail: Detail, text: str) -> list[str]:
    """Values a reply states for ``detail``: a value of its shape just after its name."""
    if detail.named is None or detail.value is None:
        return []
    found = []
    for name in detail.named.finditer(text):
        near = text[name.end() : name.end() + _NEAR_AFTER]
        first = detail.value.search(near)
        if first is not None:
            found.append(first.group("v"))
    return found


def attrition(turns: Sequence[Said], reply: Said) -> str | None:
    """Why ``reply`` shows knowledge attrition (it asks again for a detail a user gave
    earlier, or states another value for it), or None."""
    facts = user_facts([t for t in turns if t.turn < reply.turn])
    if not facts:
        return None
    questions = _questions(reply.content)
    for fact in facts:
        if questions and fact.detail.asked.search(questions):
            return f"turn {reply.turn} asks for the {fact.detail.kind} given at turn {fact.turn}"
    for detail in DETAILS:
        given = {f.value.lstrip("#").upper(): f for f in facts if f.detail is detail and f.value}
        for value in _stated_values(detail, reply.content):
            if given and value.upper() not in given:
                fact = next(iter(given.values()))
                return (
                    f"turn {reply.turn} states {detail.kind} {value}, but turn {fact.turn} "
                    f"gave {fact.value}"
                )
    return None
