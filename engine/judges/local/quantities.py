"""Quantities in text (numbers with units, currencies, multipliers, rates) and the
number rule of the contradiction checks: a claim and its evidence that state the same
kind of quantity with different values contradict each other."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from engine.judges.local.rule_hit import RuleHit

_CURRENCY_SYMBOLS = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR"}
CURRENCY_WORDS = {
    "usd": "USD",
    "dollar": "USD",
    "dollars": "USD",
    "eur": "EUR",
    "euro": "EUR",
    "euros": "EUR",
    "gbp": "GBP",
    "pound": "GBP",
    "pounds": "GBP",
    "yen": "JPY",
    "jpy": "JPY",
}
UNITS: dict[str, tuple[str, str, float]] = {}
"""unit word -> (family, canonical unit, factor to the family base)."""
_UNIT_TABLE: dict[str, dict[tuple[str, ...], float]] = {
    "data": {
        ("b", "byte", "bytes"): 1.0,
        ("kb", "kilobyte", "kilobytes"): 1e3,
        ("mb", "megabyte", "megabytes"): 1e6,
        ("gb", "gigabyte", "gigabytes"): 1e9,
        ("tb", "terabyte", "terabytes"): 1e12,
        ("pb", "petabyte", "petabytes"): 1e15,
    },
    "time": {
        ("ms", "millisecond", "milliseconds"): 0.001,
        ("s", "sec", "secs", "second", "seconds"): 1.0,
        ("min", "mins", "minute", "minutes"): 60.0,
        ("h", "hr", "hrs", "hour", "hours"): 3600.0,
        ("day", "days"): 86400.0,
        ("week", "weeks"): 604800.0,
        ("month", "months"): 2.6e6,
        ("year", "years"): 3.15e7,
    },
    "length": {
        ("mm", "millimetre", "millimetres", "millimeter", "millimeters"): 0.001,
        ("cm", "centimetre", "centimetres", "centimeter", "centimeters"): 0.01,
        ("m", "metre", "metres", "meter", "meters"): 1.0,
        ("km", "kilometre", "kilometres", "kilometer", "kilometers"): 1000.0,
        ("mi", "mile", "miles"): 1609.34,
        ("ft", "foot", "feet"): 0.3048,
        ("in", "inch", "inches"): 0.0254,
    },
    "mass": {
        ("mg", "milligram", "milligrams"): 0.001,
        ("g", "gram", "grams"): 1.0,
        ("kg", "kilogram", "kilograms"): 1000.0,
        ("lb", "lbs", "pound-weight"): 453.6,
        ("t", "tonne", "tonnes", "ton", "tons"): 1e6,
    },
    "percent": {("%", "percent", "per cent", "pct"): 1.0},
}
for _family, _table in _UNIT_TABLE.items():
    for _names, _factor in _table.items():
        for _name in _names:
            UNITS[_name] = (_family, _names[0], _factor)

MULTIPLIERS = {
    "k": 1e3,
    "thousand": 1e3,
    "m": 1e6,
    "mn": 1e6,
    "million": 1e6,
    "millions": 1e6,
    "bn": 1e9,
    "b": 1e9,
    "billion": 1e9,
    "billions": 1e9,
    "trillion": 1e12,
}
_NUMBER_WORDS = {
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
}
_UNIT_ALTERNATION = "|".join(
    sorted((re.escape(u) for u in UNITS if u != "%"), key=len, reverse=True)
)
_CURRENCY_WORD_ALTERNATION = "|".join(sorted(CURRENCY_WORDS, key=len, reverse=True))
_MULT_ALTERNATION = "|".join(sorted(MULTIPLIERS, key=len, reverse=True))
_QUANTITY = re.compile(
    rf"(?P<cur>[$€£¥₹])?\s?"
    # a digit inside a name ("Zephyr X2", "GPT4") is part of the name, not a number
    rf"(?P<num>(?<![A-Za-z])\d+(?:,\d{{3}})*(?:\.\d+)?|\b(?:{'|'.join(_NUMBER_WORDS)})\b)"
    rf"(?:\s?(?P<mult>(?:{_MULT_ALTERNATION})\b))?"
    rf"(?:\s?-?\s?(?P<unit>%|(?:{_UNIT_ALTERNATION})\b))?"
    rf"(?:\s?(?P<curword>(?:{_CURRENCY_WORD_ALTERNATION})\b))?",
    re.IGNORECASE,
)
YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)(?:s\b)?")


@dataclass(frozen=True)
class Quantity:
    """A number with its currency or unit, normalised to a family base."""

    value: float
    """The number as written (after k/million multipliers)."""
    currency: str | None
    """ISO code when the number is money."""
    family: str | None
    """Unit family (data, time, length, mass, percent)."""
    unit: str | None
    """Canonical unit within the family."""
    text: str
    """The quantity as written."""

    @property
    def base(self) -> float:
        """Value in the family's base unit (5 GB -> 5e9)."""
        if self.unit is None:
            return self.value
        return self.value * UNITS[self.unit][2]


@lru_cache(maxsize=8192)
def quantities(text: str) -> tuple[Quantity, ...]:
    """Numbers of ``text`` with currencies and units; years are left to the date rule."""
    out: list[Quantity] = []
    for m in _QUANTITY.finditer(text):
        raw = m.group("num")
        if raw.lower() in _NUMBER_WORDS:
            value = float(_NUMBER_WORDS[raw.lower()])
        else:
            value = float(raw.replace(",", ""))
        cur = _CURRENCY_SYMBOLS.get(m.group("cur") or "") or CURRENCY_WORDS.get(
            (m.group("curword") or "").lower()
        )
        mult = (m.group("mult") or "").lower()
        unit_word = (m.group("unit") or "").lower()
        # "5 m" is metres, "$5 m" is millions: money takes the multiplier reading.
        if mult in ("m", "b") and cur is None and not unit_word:
            unit_word, mult = mult, ""
        if mult:
            value *= MULTIPLIERS[mult]
        family = unit = None
        if unit_word in UNITS:
            family, unit, _ = UNITS[unit_word]
        if family is None and cur is None and raw.isdigit() and YEAR.fullmatch(raw):
            continue  # a year, judged by the date rule
        out.append(Quantity(value, cur, family, unit, m.group(0).strip()))
    return tuple(out)


def _same_number(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


_RATE = re.compile(
    r"\b(?:per|an?|every|each)\s+(second|minute|hour|day|week|month|year)\b|/(s|min|h|hr|mo)\b",
    re.IGNORECASE,
)


def _rates(text: str) -> set[str]:
    return {(m.group(1) or m.group(2)).lower() for m in _RATE.finditer(text)}


def number_rule(claim: str, evidence: str) -> RuleHit | None:
    claim_rates, evidence_rates = _rates(claim), _rates(evidence)
    if claim_rates and evidence_rates and not claim_rates & evidence_rates:
        return RuleHit(
            "unit",
            f"claim says per {'/'.join(sorted(claim_rates))}, evidence says per "
            f"{'/'.join(sorted(evidence_rates))}",
        )
    claim_q, evidence_q = quantities(claim), quantities(evidence)
    if not claim_q or not evidence_q:
        return None
    for q in claim_q:
        if any(same_quantity(q, e) for e in evidence_q):
            continue
        for e in evidence_q:
            if _same_number(q.value, e.value) and q.currency and e.currency:
                return RuleHit("unit", f"claim says {q.text}, evidence says {e.text}")
            if (
                _same_number(q.value, e.value)
                and q.family
                and q.family == e.family
                and q.unit != e.unit
            ):
                return RuleHit("unit", f"claim says {q.text}, evidence says {e.text}")
        for e in evidence_q:
            # An evidence number the claim also states is accounted for: the claim adds a
            # number ("$12,000 before subsidies and $8,000 after"), it does not change one.
            if any(same_quantity(c, e) for c in claim_q):
                continue
            if q.family == e.family and q.currency == e.currency:
                return RuleHit("number", f"claim says {q.text}, evidence says {e.text}")
    return None


def same_quantity(q: Quantity, e: Quantity) -> bool:
    if q.currency and e.currency and q.currency != e.currency:
        return False
    if q.family and e.family:
        return q.family == e.family and _same_number(q.base, e.base)
    return _same_number(q.value, e.value)
