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
from collections.abc import Sequence
from functools import lru_cache

from engine.judges.local.antonyms import ANTONYM_PAIRS, IRREGULAR_FORMS
from engine.judges.local.quantities import (
    CURRENCY_WORDS,
    MULTIPLIERS,
    UNITS,
    YEAR,
    number_rule,
    quantities,
    same_quantity,
)
from engine.judges.local.rule_hit import RuleHit

RULES_VERSION = "rules-v4"
"""Changes whenever a rule changes meaning; part of the local judge's prompt_version."""


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


@lru_cache(maxsize=16384)
def words(text: str) -> tuple[str, ...]:
    """Lower-cased word and number tokens (apostrophes kept, curly ones straightened).

    Kept per text: every rule tokenises the claim and the unit it reads, for each of the
    claim's candidate units and each metric."""
    return tuple(t.lower().replace("’", "'") for t in _TOKEN.findall(text))


@lru_cache(maxsize=4096)
def lowered(text: str) -> str:
    """``text.lower()``, kept: the whole context is searched in lower case for each claim."""
    return text.lower()


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A crude suffix strip so offered/offers/offering meet (no dictionary needed)."""
    w = word.lower().strip("'")
    if w.endswith("n't"):
        w = w[:-3]
    # "foldable" states what "folds" does; only long words, so "capable" keeps its stem.
    if len(w) > 7 and w.endswith(("able", "ible")):
        return w[:-4]
    for suffix in ("ing", "ied", "ies", "ed", "es", "'s", "s"):
        if len(w) > len(suffix) + 2 and w.endswith(suffix):
            w = w[: -len(suffix)]
            if suffix in ("ied", "ies"):
                w += "y"
            break
    return w


def content_stems(text: str) -> set[str]:
    """Stems of the non-stopword tokens of ``text`` (a new set: callers may change it)."""
    return set(_content_stems(text))


@lru_cache(maxsize=4096)
def _content_stems(text: str) -> frozenset[str]:
    # The judge reads one claim, window or context against many others: tokenising and
    # stemming each text once took a fifth of the local judge's time before.
    # a stem can come out empty (a word of suffix letters only): it names nothing
    stems = (stem(w) for w in words(text) if w not in STOPWORDS and not w.isdigit())
    return frozenset(s for s in stems if s)


# --------------------------------------------------------------------------- negation

_NEGATION = re.compile(
    r"\b(?:no longer|not|never|no|none|nobody|nothing|neither|nor|cannot|without|"
    r"lacks?|lacking|fails? to|failed to|removes?|removed|removing|drops?|dropped|"
    r"discontinues?|discontinued|stops?|stopped|ceased?)\b|n't\b",
    re.IGNORECASE,
)


@lru_cache(maxsize=8192)
def _negated_scopes(text: str) -> tuple[frozenset[str], ...]:
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
    scopes: list[frozenset[str]] = []
    for i, (_, end) in enumerate(cues):
        if i in dropped:
            continue
        following = [w for w in words(text[end:]) if w not in STOPWORDS][:3]
        if following:
            scopes.append(frozenset(stem(w) for w in following))
    return tuple(scopes)


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


# --------------------------------------------------------------------------- dates


@lru_cache(maxsize=8192)
def _dates(text: str) -> tuple[frozenset[str], frozenset[int], frozenset[int]]:
    years = frozenset(m.group(0).lower() for m in YEAR.finditer(text))
    toks = words(text)
    months = frozenset(
        _MONTHS[t.rstrip(".")]
        for i, t in enumerate(toks)
        # "may" is a verb far more often than a month: only count it next to a number.
        if t.rstrip(".") in _MONTHS
        and (t != "may" or _near_number(toks, i))
        and (len(t) > 3 or _near_number(toks, i))
    )
    # "on Saturdays" names the same day as "on Saturday".
    days = (t[:-1] if t.endswith("days") else t for t in toks)
    weekdays = frozenset(_WEEKDAYS[t] for t in days if t in _WEEKDAYS and len(t) > 3)
    return years, months, weekdays


def _near_number(toks: Sequence[str], i: int) -> bool:
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
        if low in UNITS or low in CURRENCY_WORDS or low in MULTIPLIERS:
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
    foreign = {e for e in claim_e if e not in context_lower and not _spelled_out(e, context_lower)}
    others = {o for o in evidence_e - claim_e if o not in claim.lower()}
    if foreign and _only_in_added_parts(claim, foreign, evidence):
        return None
    if foreign and others:
        return RuleHit(
            "entity",
            f"claim names {', '.join(sorted(foreign))}, evidence names {', '.join(sorted(others))}",
        )
    return None


def _only_in_added_parts(claim: str, names: set[str], evidence: str) -> bool:
    """Every one of ``names`` sits in a part of a compound claim that the evidence does not
    cover ("won the prize in 1903 together with Albert Einstein"): the claim adds someone,
    which is unsupported, not a swap of who did it."""
    added = [p.lower() for p in uncovered_parts(claim, evidence)]
    return bool(added) and all(any(n in part for part in added) for n in names)


# --------------------------------------------------------------------------- antonyms

_ANTONYMS: dict[str, set[str]] = {}
for _a, _b in ANTONYM_PAIRS:
    _ANTONYMS.setdefault(_a, set()).add(_b)
    _ANTONYMS.setdefault(_b, set()).add(_a)


def _variants(word: str) -> set[str]:
    base = word[:-1] if word.endswith("e") else word
    forms = {word, word + "s", word + "d", word + "ed", word + "es", base + "ing"}
    return forms | IRREGULAR_FORMS.get(word, set())


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
    context_lower = lowered(context or evidence)
    return (
        _negation(claim, evidence)
        or number_rule(claim, evidence)
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
        if not any(same_quantity(q, e) for e in evidence_q):
            missing.append(q.text)
    cy, cm, cw = _dates(claim)
    ey, em, ew = _dates(evidence)
    missing.extend(sorted(cy - ey))
    missing.extend(f"month {m}" for m in sorted(cm - em))
    missing.extend(f"weekday {w}" for w in sorted(cw - ew))
    haystack = lowered(context or evidence)
    missing.extend(
        sorted(e for e in entities(claim) if e not in haystack and not _spelled_out(e, haystack))
    )
    return missing


def _spelled_out(name: str, text: str) -> bool:
    """``name`` is an acronym whose words ``text`` spells out ("SLA": "service level
    agreement"), with or without the small words between them ("terms of service")."""
    if not (2 <= len(name) <= 6 and name.isalpha()):
        return False
    toks = words(text)
    for seq in (toks, [t for t in toks if t not in STOPWORDS]):
        initials = "".join(t[0] for t in seq)
        if name in initials:
            return True
    return False


def entity_swap(claim: str, evidence: str, window: str, context: str) -> RuleHit | None:
    """The claim says what the evidence says about someone or somewhere else: its other
    content words are (mostly) in the evidence, its names are nowhere in the context and
    the evidence names another ("designed by Gustave Eiffel" against "designed by Joseph
    Strauss"). Names pull MiniLM's cosine down, so such evidence can rank below the
    contradiction threshold; this rule reads it anyway. ``window`` is the evidence with
    its neighbouring sentences, where the rest of the claim is looked for."""
    hit = _entity(claim, evidence, lowered(context))
    if hit is None:
        return None
    # Shared numbers ("Version 4.0") say the topic is the same, not the statement.
    names = {stem(w) for e in entities(claim) for w in words(e)}
    rest = {w for w in content_stems(claim) - names if not w[0].isdigit()}
    if len(rest) < 2:
        return None
    covered = len(rest & content_stems(window)) / len(rest)
    return hit if covered >= 0.6 else None


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
        if stems and stems <= _AT_LEAST and evidence_stems & _AT_LEAST:
            # "1.2 or later" and "1.2 or higher" state the same bound.
            continue
        if not stems & evidence_stems and not numbers & evidence_numbers:
            out.append(part.strip(" ."))
    return out


_AT_LEAST = frozenset(
    stem(w) for w in ("later", "higher", "above", "newer", "greater", "more", "up", "upward")
)
