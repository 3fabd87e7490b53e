"""Atomic claims derived from a reference answer, locally and deterministically.

Real test sets (RAGAS, DeepEval, promptfoo, plain QA files) carry a reference answer and no
hand-written claims. Completeness needs claims, so the reference is cut into atomic facts:

1. sentences (questions and courtesy sentences dropped, leading connectives such as
   "Additionally," or "In short," removed);
2. clauses at semicolons and at ", and/but/while/whereas" before a new subject;
3. coordinated predicates ("The Pro plan costs $20 and includes 100 GB") get the shared
   subject copied: "The Pro plan costs $20", "The Pro plan includes 100 GB";
4. a trailing list ("includes SSO, audit logs and priority support") becomes one claim per
   item with the shared head ("... includes SSO", "... includes audit logs", ...);
5. fragments with fewer than two content words are dropped, duplicates merged.

Ids are ``d`` + 8 hex digits of the sha256 of the normalised claim text: the same reference
gives the same ids in every run, and editing one sentence leaves the other ids alone.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

from engine.judges.local.abstention import is_courtesy
from engine.models import ExpectedClaim, Importance
from engine.text import split_sentences

DERIVED_IMPORTANCE: Importance = "expected"
"""Derived claims are the reference's facts, not a person's priorities: ``expected``."""

_LEADING = re.compile(
    r"^(?:(?:yes|no|sure|certainly|of course|absolutely|well|so|also|additionally|"
    r"furthermore|moreover|however|overall|in short|"
    r"in summary|in addition|to summarise|to summarize|in brief|basically|essentially|"
    r"importantly|note that|please note that|for example|for instance|in fact|as a result|"
    r"according to [^,]{1,60}|based on [^,]{1,60})\s*[,:]?\s+)+",
    re.IGNORECASE,
)
_CLAUSE_CUT = re.compile(r";\s+|,\s+(?:but|while|whereas|although|though)\s+|\s+[–—]\s+")
_AND_CUT = re.compile(r",?\s+and\s+(?:also\s+)?", re.IGNORECASE)
_WORD = re.compile(r"[^\W_]+(?:[.,'’-][^\W_]+)*", re.UNICODE)
_STOP_TEXT = """a an the and or but of to in on at by for with from as is are was were be
    been it its
    this that these those there here you your we our they their i he she his her them us do
    does did has have had will would can could should may might must not no so if than then
    also very just only all any each some such"""
_STOP = frozenset(_STOP_TEXT.split())
# Words that start a predicate: a conjunct starting with one of these lacks its own subject.
_PREDICATE_TEXT = """is are was were has have had can cannot could will would may might must
    should does do
    did includes include included offers offer offered provides provide provided supports
    support supported costs cost requires require required comes come gives give gets get
    allows allow lets let takes take makes make uses use runs run adds add keeps keep covers
    cover charges charge needs need contains contain features feature saves save starts start
    ends end lasts last stores store sends send works work helps help returns return keeps keep
    earns earn pays pay opens open closes
    close receives receive remains remain becomes become lives live sells sell buys buy builds
    build holds hold applies apply expires expire renews renew grows grow rises rise falls fall
    reaches reach serves serve accepts accept shows show means mean says say leads lead wins
    win owns own employs employ ships ship processes process launched founded acquired
    released created invented discovered moved died became won lost"""
_PREDICATE_START = frozenset(_PREDICATE_TEXT.split())
_AUXILIARIES = frozenset(_PREDICATE_TEXT.split()[:18])
"""is, are, was, were, has, have, had, can, ...: a verb whatever the sentence."""
# Words after which a list's items start ("includes SSO, audit logs and support").
_HEAD_TEXT = "with of for like as such including include includes are is in on to by from"
_LIST_HEAD = _PREDICATE_START | frozenset(_HEAD_TEXT.split())


def normalise(text: str) -> str:
    """Lower-cased, NFKC, whitespace collapsed, outer punctuation stripped: what ids hash."""
    folded = unicodedata.normalize("NFKC", text).lower().replace("’", "'")
    return " ".join(folded.split()).strip(" .;:,!")


def claim_id(text: str) -> str:
    """Stable id of a derived claim: ``d`` + 8 hex digits of sha256(normalised text)."""
    return "d" + hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()[:8]


def _content_words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


def _tidy(text: str) -> str:
    text = _LEADING.sub("", text.strip())
    text = text.strip(" ,;:-–—").rstrip(".!")
    return text[:1].upper() + text[1:] if text else text


def _subject(clause: str) -> str | None:
    """The words before the first predicate word, when there are one to eight of them."""
    words = clause.split()
    for i, word in enumerate(words[:9]):
        if word.lower().strip(",") in _PREDICATE_START:
            return " ".join(words[:i]) if i > 0 else None
    return None


def _split_coordination(clause: str) -> list[str]:
    """'S V1 X and V2 Y' -> ['S V1 X', 'S V2 Y'] when the second conjunct has no subject;
    'S1 V1 X and S2 V2 Y' -> both as they are."""
    parts = _AND_CUT.split(clause)
    if len(parts) < 2:
        return [clause]
    subject = _subject(parts[0])
    if subject is None:
        return [clause]  # "Salt and pepper are ...": the first conjunct has no predicate
    out = [parts[0]]
    for part in parts[1:]:
        first = part.split()[0].lower() if part.split() else ""
        if first in _PREDICATE_START and subject:
            out.append(f"{subject} {part}")
        elif _subject(part) is not None:
            out.append(part)
        else:
            return [clause]  # "salt and pepper": a noun phrase, not two clauses
    return out


def _split_list(clause: str) -> list[str]:
    """'H x, y(,) and z' -> ['H x', 'H y', 'H z'] for short items after a head word."""
    # A comma before a year is part of a date ("January 15, 1967"), not a list separator.
    pieces = [p.strip() for p in re.split(r",\s*(?!\d{4}\b)(?:and\s+|or\s+)?|\s+and\s+", clause)]
    if len(pieces) < 3 or any(not p for p in pieces):
        return [clause]
    items = pieces[1:]
    # Items are short noun phrases; one with a verb of its own makes this clauses, not a list.
    if any(len(p.split()) > 5 or _AUXILIARIES & set(p.lower().split()) for p in items):
        return [clause]
    if ":" in pieces[0]:
        return [clause]  # "three plans: Free, Pro and Team": the list is the fact
    words = pieces[0].split()
    cut = None
    for i in range(len(words) - 1, 0, -1):
        if words[i - 1].lower().rstrip(":") in _LIST_HEAD or words[i - 1].endswith(":"):
            cut = i
            break
    if cut is None or len(words) - cut > 5:
        return [clause]
    head = " ".join(words[:cut]).rstrip(":")
    first = " ".join(words[cut:])
    return [f"{head} {item}" for item in [first, *items]]


def _atoms(sentence: str) -> list[str]:
    out: list[str] = []
    for clause in _CLAUSE_CUT.split(sentence):
        clause = _tidy(clause)
        if not clause:
            continue
        listed = _split_list(clause)
        if len(listed) > 1:
            out.extend(listed)
            continue
        out.extend(_split_coordination(clause))
    return out


def derive_claims(reference: str) -> tuple[ExpectedClaim, ...]:
    """Atomic claims of ``reference`` with stable ids (empty for an empty reference)."""
    claims: list[ExpectedClaim] = []
    seen: set[str] = set()
    for sentence in split_sentences(reference):
        text = sentence.text.strip()
        if text.endswith("?") or is_courtesy(text):
            continue
        for atom in _atoms(text):
            atom = _tidy(atom)
            if len(_content_words(atom)) < 2 and not any(ch.isdigit() for ch in atom):
                continue
            key = normalise(atom)
            if key in seen:
                continue
            seen.add(key)
            claims.append(
                ExpectedClaim(id=claim_id(atom), text=atom, importance=DERIVED_IMPORTANCE)
            )
    return tuple(claims)
