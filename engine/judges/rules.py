"""Contradiction rules the local judge applies where embeddings are blind.

A sentence and its negation, or the same sentence with another price, sit at cosine
0.77-0.97 with MiniLM: similarity finds the evidence, these rules read it. Every rule
compares one claim with one piece of evidence (a context sentence or clause) and either
fires (:class:`RuleHit`, the claim is contradicted) or stays silent. :func:`missing_details`
lists the claim's checkable facts (numbers, dates, names) the evidence does not state, which
keeps a claim that adds details from counting as supported ("partial support").

All checks are lexical, deterministic and cheap (a few microseconds per pair).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

RULES_VERSION = "rules-v3"
"""Changes whenever a rule changes meaning; part of the local judge's prompt_version."""


@dataclass(frozen=True)
class RuleHit:
    """A rule that fired: the claim disagrees with the evidence."""

    rule: str
    """negation, number, unit, date, entity or antonym."""
    detail: str
    """What differs, for people: ``claim says 25, evidence says 20``."""


# --------------------------------------------------------------------------- tokens

_TOKEN = re.compile(r"[A-Za-z][A-Za-z'’\-]*|\d+(?:[.,]\d+)*")
_STOPWORD_TEXT = """a an the and or but if then so of to in on at by for with from as is are was
    were be been
    being it its this that these those there here he she they we you i his her their our your my
    me him them us do does did doing has have had having will would can could should may might
    must shall also very just only more most less such than too into onto over under about
    after before between through during up down out off again further once all any both each
    few other some own same what which who whom whose when where why how not no nor never
    while because until per via new one"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_MONTHS = {
    m: i + 1
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ]
    )
    for m in names
}
_WEEKDAYS = {
    d: i
    for i, names in enumerate(
        [
            ("monday", "mon"),
            ("tuesday", "tue", "tues"),
            ("wednesday", "wed"),
            ("thursday", "thu", "thurs"),
            ("friday", "fri"),
            ("saturday", "sat"),
            ("sunday", "sun"),
        ]
    )
    for d in names
}


def words(text: str) -> list[str]:
    """Lower-cased word and number tokens (apostrophes kept, curly ones straightened)."""
    return [t.lower().replace("’", "'") for t in _TOKEN.findall(text)]


def stem(word: str) -> str:
    """A crude suffix strip so offered/offers/offering meet (no dictionary needed)."""
    w = word.lower().strip("'")
    if w.endswith("n't"):
        w = w[:-3]
    for suffix in ("ing", "ied", "ies", "ed", "es", "'s", "s"):
        if len(w) > len(suffix) + 2 and w.endswith(suffix):
            w = w[: -len(suffix)]
            if suffix in ("ied", "ies"):
                w += "y"
            break
    return w


def content_stems(text: str) -> set[str]:
    """Stems of the non-stopword tokens of ``text``."""
    return {stem(w) for w in words(text) if w not in STOPWORDS and not w.isdigit()}


# --------------------------------------------------------------------------- negation

_NEGATION = re.compile(
    r"\b(?:no longer|not|never|no|none|nobody|nothing|neither|nor|cannot|without|"
    r"lacks?|lacking|fails? to|failed to|removes?|removed|removing|drops?|dropped|"
    r"discontinues?|discontinued|stops?|stopped|ceased?)\b|n't\b",
    re.IGNORECASE,
)


def _negated_scopes(text: str) -> list[set[str]]:
    """For each negation cue, the stems of the next three content words (its scope).

    A cue inside another cue's scope cancels it ("did not remove" states that something
    stays), so both are dropped.
    """
    cues = [(m.start(), m.end()) for m in _NEGATION.finditer(text)]
    dropped: set[int] = set()
    for i in range(len(cues) - 1):
        if i in dropped:
            continue
        gap = [w for w in words(text[cues[i][1] : cues[i + 1][0]]) if w not in STOPWORDS]
        if not gap:
            dropped.update((i, i + 1))
    scopes: list[set[str]] = []
    for i, (_, end) in enumerate(cues):
        if i in dropped:
            continue
        following = [w for w in words(text[end:]) if w not in STOPWORDS][:3]
        if following:
            scopes.append({stem(w) for w in following})
    return scopes


def _negation(claim: str, evidence: str) -> RuleHit | None:
    claim_scopes, evidence_scopes = _negated_scopes(claim), _negated_scopes(evidence)
    claim_words, evidence_words = content_stems(claim), content_stems(evidence)
    # A negation in one text whose scope the other text states without a negation.
    for scope in claim_scopes:
        if scope & evidence_words and not any(scope & other for other in evidence_scopes):
            return RuleHit("negation", "the claim negates what the evidence states")
    for scope in evidence_scopes:
        if scope & claim_words and not any(scope & other for other in claim_scopes):
            return RuleHit("negation", "the evidence negates what the claim states")
    return None


# --------------------------------------------------------------------------- numbers

_CURRENCY_SYMBOLS = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR"}
_CURRENCY_WORDS = {
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
_UNITS: dict[str, tuple[str, str, float]] = {}
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
            _UNITS[_name] = (_family, _names[0], _factor)

_MULTIPLIERS = {
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
    sorted((re.escape(u) for u in _UNITS if u != "%"), key=len, reverse=True)
)
_CURRENCY_WORD_ALTERNATION = "|".join(sorted(_CURRENCY_WORDS, key=len, reverse=True))
_MULT_ALTERNATION = "|".join(sorted(_MULTIPLIERS, key=len, reverse=True))
_QUANTITY = re.compile(
    rf"(?P<cur>[$€£¥₹])?\s?"
    rf"(?P<num>\d+(?:,\d{{3}})*(?:\.\d+)?|\b(?:{'|'.join(_NUMBER_WORDS)})\b)"
    rf"(?:\s?(?P<mult>(?:{_MULT_ALTERNATION})\b))?"
    rf"(?:\s?-?\s?(?P<unit>%|(?:{_UNIT_ALTERNATION})\b))?"
    rf"(?:\s?(?P<curword>(?:{_CURRENCY_WORD_ALTERNATION})\b))?",
    re.IGNORECASE,
)
_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)(?:s\b)?")


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
        return self.value * _UNITS[self.unit][2]


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
        cur = _CURRENCY_SYMBOLS.get(m.group("cur") or "") or _CURRENCY_WORDS.get(
            (m.group("curword") or "").lower()
        )
        mult = (m.group("mult") or "").lower()
        unit_word = (m.group("unit") or "").lower()
        # "5 m" is metres, "$5 m" is millions: money takes the multiplier reading.
        if mult in ("m", "b") and cur is None and not unit_word:
            unit_word, mult = mult, ""
        if mult:
            value *= _MULTIPLIERS[mult]
        family = unit = None
        if unit_word in _UNITS:
            family, unit, _ = _UNITS[unit_word]
        if family is None and cur is None and raw.isdigit() and _YEAR.fullmatch(raw):
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


def _numbers(claim: str, evidence: str) -> RuleHit | None:
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
        if any(_matches(q, e) for e in evidence_q):
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
            if any(_matches(c, e) for c in claim_q):
                continue
            if q.family == e.family and q.currency == e.currency:
                return RuleHit("number", f"claim says {q.text}, evidence says {e.text}")
    return None


def _matches(q: Quantity, e: Quantity) -> bool:
    if q.currency and e.currency and q.currency != e.currency:
        return False
    if q.family and e.family:
        return q.family == e.family and _same_number(q.base, e.base)
    return _same_number(q.value, e.value)


# --------------------------------------------------------------------------- dates


@lru_cache(maxsize=8192)
def _dates(text: str) -> tuple[frozenset[str], frozenset[int], frozenset[int]]:
    years = frozenset(m.group(0).lower() for m in _YEAR.finditer(text))
    toks = words(text)
    months = frozenset(
        _MONTHS[t.rstrip(".")]
        for i, t in enumerate(toks)
        # "may" is a verb far more often than a month: only count it next to a number.
        if t.rstrip(".") in _MONTHS
        and (t != "may" or _near_number(toks, i))
        and (len(t) > 3 or _near_number(toks, i))
    )
    weekdays = frozenset(_WEEKDAYS[t] for t in toks if t in _WEEKDAYS and len(t) > 3)
    return years, months, weekdays


def _near_number(toks: list[str], i: int) -> bool:
    window = toks[max(0, i - 1) : i + 2]
    return any(t.isdigit() for t in window)


def _date(claim: str, evidence: str) -> RuleHit | None:
    cy, cm, cw = _dates(claim)
    ey, em, ew = _dates(evidence)
    for name, c, e in (("year", cy, ey), ("month", cm, em), ("weekday", cw, ew)):
        if c and e and not (c & e):
            return RuleHit("date", f"claim {name} {_fmt(c)} differs from evidence {_fmt(e)}")
    return None


def _fmt(values: frozenset[str] | frozenset[int]) -> str:
    return "/".join(sorted(str(v) for v in values))


# --------------------------------------------------------------------------- entities

_CAPITALISED = re.compile(r"\b[A-Z][\w'’\-]*[A-Za-z0-9]|\b[A-Z]\b")


@lru_cache(maxsize=8192)
def entities(text: str) -> frozenset[str]:
    """Capitalised names of ``text`` (lower-cased), skipping common words and dates."""
    out: set[str] = set()
    for m in _CAPITALISED.finditer(text):
        token = m.group(0).replace("’", "'").removesuffix("'s")
        low = token.lower()
        if low in STOPWORDS or low in _MONTHS or low in _WEEKDAYS or len(low) < 2:
            continue
        if low in _UNITS or low in _CURRENCY_WORDS or low in _MULTIPLIERS:
            continue
        at_start = m.start() == 0 or text[: m.start()].rstrip().endswith((".", "!", "?", ":"))
        # A capital at the start of a sentence says nothing, unless a capitalised word
        # follows ("Maria Lopez founded ...").
        if at_start and (
            low in _COMMON_SENTENCE_STARTS or not re.match(r"\s+[A-Z]", text[m.end() :])
        ):
            continue
        out.add(low)
    return frozenset(out)


_COMMON_START_TEXT = """yes however therefore also additionally furthermore moreover overall
    today currently
    customers users you we our there each every most many some both plans prices"""
_COMMON_SENTENCE_STARTS = frozenset(_COMMON_START_TEXT.split())


def _entity(claim: str, evidence: str, context_lower: str) -> RuleHit | None:
    claim_e, evidence_e = entities(claim), entities(evidence)
    # A name the context never mentions, while the evidence names someone else instead.
    foreign = {e for e in claim_e if e not in context_lower}
    others = {o for o in evidence_e - claim_e if o not in claim.lower()}
    if foreign and others:
        return RuleHit(
            "entity",
            f"claim names {', '.join(sorted(foreign))}, evidence names {', '.join(sorted(others))}",
        )
    return None


# --------------------------------------------------------------------------- antonyms

_ANTONYM_PAIRS = [
    ("increase", "decrease"),
    ("increase", "reduce"),
    ("rise", "fall"),
    ("raise", "lower"),
    ("higher", "lower"),
    ("larger", "smaller"),
    ("largest", "smallest"),
    ("biggest", "smallest"),
    ("more", "fewer"),
    ("before", "after"),
    ("earlier", "later"),
    ("earliest", "latest"),
    ("first", "last"),
    ("free", "paid"),
    ("include", "exclude"),
    ("included", "excluded"),
    ("available", "unavailable"),
    ("allow", "prohibit"),
    ("allowed", "forbidden"),
    ("enable", "disable"),
    ("open", "closed"),
    ("public", "private"),
    ("accept", "reject"),
    ("win", "lose"),
    ("won", "lost"),
    ("gain", "loss"),
    ("maximum", "minimum"),
    ("online", "offline"),
    ("internal", "external"),
    ("success", "failure"),
    ("true", "false"),
    ("always", "never"),
    ("buy", "sell"),
    ("import", "export"),
    ("positive", "negative"),
    ("legal", "illegal"),
    ("supported", "unsupported"),
    ("compatible", "incompatible"),
    ("possible", "impossible"),
    ("optional", "mandatory"),
    ("optional", "required"),
    ("monthly", "annual"),
    ("monthly", "yearly"),
    ("north", "south"),
    ("east", "west"),
    ("male", "female"),
    ("cheaper", "expensive"),
    ("cheapest", "expensive"),
    ("faster", "slower"),
    ("fastest", "slowest"),
    ("profit", "loss"),
    ("born", "died"),
    ("win", "lost"),
    ("morning", "evening"),
    ("weekdays", "weekends"),
    ("automatic", "manual"),
    ("automatically", "manually"),
    ("permanent", "temporary"),
    ("unlimited", "limited"),
    ("inside", "outside"),
    ("above", "below"),
    ("up", "down"),
    ("same", "different"),
    ("new", "used"),
    ("hot", "cold"),
    ("young", "old"),
    ("oldest", "youngest"),
    ("long", "short"),
    ("longest", "shortest"),
    ("longer", "shorter"),
    ("rise", "decline"),
    ("grow", "shrink"),
    ("grow", "decrease"),
    ("grow", "decline"),
    ("grow", "fall"),
    ("increase", "decline"),
    ("increase", "fall"),
    ("rise", "decrease"),
    ("premium", "free"),
    ("indoor", "outdoor"),
    ("start", "end"),
    ("beginning", "end"),
    ("used", "unused"),
    ("add", "remove"),
    ("wet", "dry"),
    ("strong", "weak"),
    ("heavy", "light"),
    ("high", "low"),
    ("easy", "difficult"),
    ("simple", "complex"),
    ("success", "fail"),
    ("pass", "fail"),
    ("winner", "loser"),
]
_IRREGULAR = {
    "rise": {"rose", "risen", "rising"},
    "fall": {"fell", "fallen", "falling"},
    "grow": {"grew", "grown", "growing"},
    "win": {"won", "winning"},
    "lose": {"lost", "losing"},
    "buy": {"bought"},
    "sell": {"sold"},
    "shrink": {"shrank", "shrunk"},
}
_ANTONYMS: dict[str, set[str]] = {}
for _a, _b in _ANTONYM_PAIRS:
    _ANTONYMS.setdefault(_a, set()).add(_b)
    _ANTONYMS.setdefault(_b, set()).add(_a)


def _variants(word: str) -> set[str]:
    base = word[:-1] if word.endswith("e") else word
    forms = {word, word + "s", word + "d", word + "ed", word + "es", base + "ing"}
    return forms | _IRREGULAR.get(word, set())


# Word forms computed once: the rule runs for every (claim, evidence) pair.
_ANTONYM_FORMS = [
    (word, _variants(word), [(o, _variants(o)) for o in sorted(opposites)])
    for word, opposites in _ANTONYMS.items()
]


_ENTRIES_BY_FORM: dict[str, list[int]] = {}
for _i, (_word, _forms, _) in enumerate(_ANTONYM_FORMS):
    for _form in _forms:
        _ENTRIES_BY_FORM.setdefault(_form, []).append(_i)


def _antonym(claim: str, evidence: str) -> RuleHit | None:
    claim_w, evidence_w = set(words(claim)), set(words(evidence))
    # Only the entries one of the claim's words belongs to, in table order.
    entries = sorted({i for w in claim_w for i in _ENTRIES_BY_FORM.get(w, ())})
    for word, forms, opposites in (_ANTONYM_FORMS[i] for i in entries):
        if forms & evidence_w:
            continue
        for opposite, opp_forms in opposites:
            if opp_forms & evidence_w and not opp_forms & claim_w:
                return RuleHit("antonym", f"claim says '{word}', evidence says '{opposite}'")
    return None


# --------------------------------------------------------------------------- entry points


def contradiction(claim: str, evidence: str, context: str = "") -> RuleHit | None:
    """The first rule that finds ``claim`` at odds with ``evidence``, or None.

    ``context`` is the whole context text: a name the claim shares with the context
    elsewhere is a reference, not a swap.
    """
    context_lower = (context or evidence).lower()
    return (
        _negation(claim, evidence)
        or _numbers(claim, evidence)
        or _date(claim, evidence)
        or _antonym(claim, evidence)
        or _entity(claim, evidence, context_lower)
    )


def missing_details(claim: str, evidence: str, context: str = "") -> list[str]:
    """Numbers, dates and names of the claim that the evidence (or, for names, the context)
    does not state: a claim that adds them is at most partly supported."""
    missing: list[str] = []
    evidence_q = quantities(evidence)
    for q in quantities(claim):
        if not any(_matches(q, e) for e in evidence_q):
            missing.append(q.text)
    cy, cm, cw = _dates(claim)
    ey, em, ew = _dates(evidence)
    missing.extend(sorted(cy - ey))
    missing.extend(f"month {m}" for m in sorted(cm - em))
    missing.extend(f"weekday {w}" for w in sorted(cw - ew))
    haystack = (context or evidence).lower()
    missing.extend(sorted(e for e in entities(claim) if e not in haystack))
    return missing


_PART_SPLIT = re.compile(
    r"\s*,\s+(?:and\s+|or\s+)?|\s+(?:and|or|with|because|through|together with|as well as|"
    r"plus|including|but|while|via)\s+",
    re.IGNORECASE,
)


def uncovered_parts(claim: str, evidence: str) -> list[str]:
    """Parts of a compound claim ("X and Y", "X with Y", "X because Y") that share no content
    word with the evidence: the claim adds something the evidence does not say."""
    evidence_stems = content_stems(evidence)
    evidence_numbers = {q.value for q in quantities(evidence)}
    parts = [p for p in _PART_SPLIT.split(claim) if p.strip()]
    if len(parts) < 2:
        return []
    out: list[str] = []
    for part in parts:
        stems = content_stems(part)
        numbers = {q.value for q in quantities(part)}
        if not stems and not numbers:
            continue
        if not stems & evidence_stems and not numbers & evidence_numbers:
            out.append(part.strip(" ."))
    return out
