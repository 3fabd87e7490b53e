"""Synthetic training pairs made from real evidence sentences (the FactCC recipe).

Generic edits of a sentence, no data set's quirks: **supported** = the sentence, its longest
clause, its numbers rounded, or an answer particle in front; **contradicted** = negation inserted
or removed, a number / word number / month / unit changed, a name swapped for another name of
the same merged group, an antonym; **not supported** = the sentence followed by a sentence the
evidence does not hold (partial support is not support). Question-and-answer claims ("The
film grossed what? $120 million.") teach the question-plus-short-answer form the analyzer sends.
A share of the pairs get unrelated sentences around the evidence, the 2-3 sentence windows the
verifier reads at run time. Only training pairs' evidence is used (never validation, never the
benchmark sets).
"""

from __future__ import annotations

import random
import re

from training.verifier.nli import (
    CONTRADICTED,
    FACT_SOURCES,
    NOT_SUPPORTED,
    SUPPORTED,
    Pair,
)

_NEG_AUX = re.compile(
    r"\b(is|are|was|were|has|have|had|can|will|would|should|could|does|do|did|must|may)\b(?! not)"
)
_NEGATED = re.compile(
    r"\b(is|are|was|were|has|have|had|does|do|did|will|would|should|could|must|may) not\b"
    r"|\b(isn't|aren't|wasn't|weren't|hasn't|haven't|hadn't|doesn't|don't|didn't|won't|"
    r"wouldn't|shouldn't|couldn't|can't|cannot)\b",
    re.IGNORECASE,
)
_CONTRACTIONS = {
    "isn't": "is",
    "aren't": "are",
    "wasn't": "was",
    "weren't": "were",
    "hasn't": "has",
    "haven't": "have",
    "hadn't": "had",
    "doesn't": "does",
    "don't": "do",
    "didn't": "did",
    "won't": "will",
    "wouldn't": "would",
    "shouldn't": "should",
    "couldn't": "could",
    "can't": "can",
    "cannot": "can",
}
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?![\w])")
_WORD_NUMBERS = [
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "twelve",
    "twenty",
    "fifty",
    "hundred",
]
_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_UNITS = [
    ("million", "billion"),
    ("thousand", "million"),
    ("minutes", "hours"),
    ("hours", "days"),
    ("days", "weeks"),
    ("weeks", "months"),
    ("months", "years"),
    ("kilometers", "miles"),
    ("percent", "times"),
    ("monthly", "annually"),
    ("daily", "weekly"),
]
_ANTONYMS = [
    ("increase", "decrease"),
    ("increased", "decreased"),
    ("rise", "fall"),
    ("rose", "fell"),
    ("more", "fewer"),
    ("higher", "lower"),
    ("larger", "smaller"),
    ("largest", "smallest"),
    ("before", "after"),
    ("first", "last"),
    ("early", "late"),
    ("earlier", "later"),
    ("won", "lost"),
    ("win", "lose"),
    ("accepted", "rejected"),
    ("accept", "reject"),
    ("agreed", "refused"),
    ("cheap", "expensive"),
    ("cheaper", "more expensive"),
    ("positive", "negative"),
    ("success", "failure"),
    ("successful", "unsuccessful"),
    ("open", "closed"),
    ("male", "female"),
    ("north", "south"),
    ("east", "west"),
    ("major", "minor"),
    ("always", "never"),
    ("all", "none of the"),
    ("many", "few"),
    ("often", "rarely"),
    ("long", "short"),
    ("old", "young"),
    ("public", "private"),
    ("interested", "not interested"),
    ("able", "unable"),
    ("easy", "difficult"),
    ("good", "bad"),
    ("best", "worst"),
    ("strong", "weak"),
    ("allowed", "forbidden"),
    ("include", "exclude"),
    ("includes", "excludes"),
    ("included", "excluded"),
    ("start", "end"),
    ("started", "ended"),
    ("began", "ended"),
    ("joined", "left"),
    ("born", "died"),
    ("buy", "sell"),
    ("bought", "sold"),
    ("gain", "loss"),
    ("same", "different"),
    ("full", "partial"),
    ("available", "unavailable"),
]
_ANT = {**{a: b for a, b in _ANTONYMS}, **{b: a for a, b in _ANTONYMS}}
_ANT_RE = re.compile(
    r"\b(" + "|".join(re.escape(w) for w in sorted(_ANT, key=len, reverse=True)) + r")\b"
)
_NAME = re.compile(r"(?<!^)(?<![.!?]\s)\b([A-Z][a-z]+(?:\s+[A-Z][a-z]+)*)\b")
_PARTICLES = ["Yes, ", "Yes. ", "Sure, ", "Indeed, ", "Correct: "]


def negate(s: str, rng: random.Random) -> str | None:
    """Insert a negation after the first auxiliary, or remove an existing one."""
    m = _NEGATED.search(s)
    if m:
        tok = m.group(0)
        if " not" in tok:
            return s[: m.start()] + tok.replace(" not", "") + s[m.end() :]
        return s[: m.start()] + _CONTRACTIONS.get(tok.lower(), tok) + s[m.end() :]
    if re.search(r"\bnever\b", s):
        return re.sub(r"\bnever\b", "always", s, count=1)
    m2 = _NEG_AUX.search(s)
    if m2:
        neg = rng.choice([" not", "n't"]) if m2.group(1) not in ("am", "may") else " not"
        if m2.group(1) == "can":
            return s[: m2.start()] + "cannot" + s[m2.end() :]
        if m2.group(1) == "will" and neg == "n't":
            return s[: m2.start()] + "won't" + s[m2.end() :]
        return s[: m2.end()] + neg + s[m2.end() :]
    return None


def _other_number(text: str, rng: random.Random) -> str:
    whole = int(text.replace(",", ""))
    if 1500 <= whole <= 2100 and "," not in text:
        return str(whole + rng.choice([-12, -5, -3, -2, -1, 1, 2, 3, 5, 11]))
    factor = rng.choice([0.25, 0.5, 2, 3, 10])
    new = max(0, round(whole * factor)) if whole > 3 else whole + rng.choice([2, 3, 5, 7])
    if new == whole:
        new = whole + 1
    return f"{new:,}" if "," in text else str(new)


def swap_number(s: str, rng: random.Random) -> str | None:
    """Change one number, word number, month or unit."""
    opts = []
    nums = list(_NUMBER.finditer(s))
    if nums:
        opts.append("num")
    words_ = [w for w in _WORD_NUMBERS if re.search(rf"\b{w}\b", s)]
    if words_:
        opts.append("word")
    months = [m for m in _MONTHS if re.search(rf"\b{m}\b", s)]
    if months:
        opts.append("month")
    units = [(a, b) for a, b in _UNITS if re.search(rf"\b{a}\b", s) or re.search(rf"\b{b}\b", s)]
    if units:
        opts.append("unit")
    if not opts:
        return None
    kind = rng.choice(opts)
    if kind == "num":
        m = rng.choice(nums)
        return s[: m.start()] + _other_number(m.group(1), rng) + s[m.end() :]
    if kind == "word":
        w = rng.choice(words_)
        return re.sub(rf"\b{w}\b", rng.choice([x for x in _WORD_NUMBERS if x != w]), s, count=1)
    if kind == "month":
        m_ = rng.choice(months)
        return re.sub(rf"\b{m_}\b", rng.choice([x for x in _MONTHS if x != m_]), s, count=1)
    a, b = rng.choice(units)
    if re.search(rf"\b{a}\b", s):
        return re.sub(rf"\b{a}\b", b, s, count=1)
    return re.sub(rf"\b{b}\b", a, s, count=1)


def swap_entity(s: str, doc_text: str, rng: random.Random) -> str | None:
    """Replace a capitalised name with another name from the same document."""
    mine = [m for m in _NAME.finditer(s) if m.group(1) not in _MONTHS]
    if not mine:
        return None
    pool = sorted(
        {m.group(1) for m in _NAME.finditer(doc_text)} - {m.group(1) for m in mine} - set(_MONTHS)
    )
    pool = [p for p in pool if p.lower() not in s.lower() and len(p) > 2]
    if not pool:
        return None
    m = rng.choice(mine)
    return s[: m.start(1)] + rng.choice(pool) + s[m.end(1) :]


def swap_antonym(s: str, rng: random.Random) -> str | None:
    """Replace one word with its antonym."""
    ms = list(_ANT_RE.finditer(s))
    if not ms:
        return None
    m = rng.choice(ms)
    return s[: m.start()] + _ANT[m.group(1)] + s[m.end() :]


def paraphrase_ish(s: str, rng: random.Random) -> str:
    """A supported variant: the sentence itself, a crop of it, rounded numbers or a particle."""
    r = rng.random()
    if r < 0.25:
        parts = [p.strip() for p in re.split(r",\s+", s) if p.strip()]
        if len(parts) >= 2:
            keep = max(parts, key=lambda p: len(p.split()))
            if len(keep.split()) >= 6:
                return keep[0].upper() + keep[1:]
    elif r < 0.4:
        m = re.search(r"(\d+)\.(\d+)\s*(%|percent)", s)
        if m:
            return (
                s[: m.start()]
                + f"{rng.choice(['about ', 'roughly ', ''])}{m.group(1)} percent"
                + s[m.end() :]
            )
        m2 = re.search(r"(\d+)\s*%", s)
        if m2:
            return s[: m2.start()] + f"{m2.group(1)} percent" + s[m2.end() :]
    elif r < 0.55:
        p = rng.choice(_PARTICLES)
        return p + s[0].lower() + s[1:] if s[:2] != s[:2].upper() else p + s
    return s


def usable_sentence(s: str) -> bool:
    """A plain prose sentence of 6-45 words (no table rows, lists or markup)."""
    n = len(s.split())
    return (
        6 <= n <= 45
        and re.search(r"[.!?\"']$", s) is not None
        and s[0] not in "#(*|-["
        and sum(c.isalpha() or c == " " for c in s) > 0.85 * len(s)
    )


def _after_capitalised(s: str, start: int) -> bool:
    """Whether the text before ``start`` ends in a capitalised word (a name cut in two)."""
    before = s[:start].split()
    return bool(before) and before[-1][:1].isupper()


def question_answer(s: str, names: list[str], rng: random.Random) -> tuple[str, int] | None:
    """A "question? answer." claim from a sentence: a number or a name becomes "what".

    The right span as the answer is supported; another number or name is contradicted.
    """
    spans = [(m.start(1), m.end(1), "num") for m in _NUMBER.finditer(s)]
    spans += [
        (m.start(1), m.end(1), "name")
        for m in _NAME.finditer(s)
        if m.group(1) not in _MONTHS and not _after_capitalised(s, m.start(1))
    ]
    if not spans:
        return None
    start, end, kind = rng.choice(spans)
    answer = s[start:end]
    question = (s[:start] + "what" + s[end:]).rstrip(" .!?\"'") + "?"
    label = SUPPORTED
    if rng.random() < 0.5:
        label = CONTRADICTED
        if kind == "num":
            answer = _other_number(answer.split(".")[0], rng)
        else:
            pool = [n for n in names if n.lower() not in s.lower() and len(n) > 2]
            if not pool:
                return None
            answer = rng.choice(pool)
    return f"{question} {answer}.", label


def synthesize(pairs: list[Pair], n: int, seed: int) -> list[Pair]:
    """About ``n`` synthetic pairs from the evidence of the claim-vs-evidence ``pairs``."""
    rng = random.Random(seed)
    sentences: list[tuple[str, str]] = []
    seen: set[str] = set()
    names_of: dict[str, set[str]] = {}
    for p in pairs:
        if p.source not in FACT_SOURCES or p.evidence in seen:
            continue
        seen.add(p.evidence)
        names_of.setdefault(p.split_key, set()).update(
            m.group(1) for m in _NAME.finditer(p.evidence) if m.group(1) not in _MONTHS
        )
        if usable_sentence(p.evidence):
            sentences.append((p.evidence, p.split_key))
    if not sentences:
        return []
    out: list[Pair] = []
    tries = 0
    while len(out) < n and tries < n * 20:
        tries += 1
        s, key = rng.choice(sentences)
        names = sorted(names_of.get(key, set()))
        if len(names) < 3:
            names += sorted(
                m.group(1)
                for m in _NAME.finditer(rng.choice(sentences)[0])
                if m.group(1) not in _MONTHS
            )
        kind = rng.random()
        claim: str | None
        label = SUPPORTED
        if kind < 0.25:
            claim = paraphrase_ish(s, rng)
        elif kind < 0.62:
            label = CONTRADICTED
            how = rng.choice(["neg", "neg", "num", "num", "ent", "ant"])
            if how == "neg":
                claim = negate(s, rng)
            elif how == "num":
                claim = swap_number(s, rng)
            elif how == "ent":
                claim = swap_entity(s, " ".join(names), rng)
            else:
                claim = swap_antonym(s, rng)
        elif kind < 0.8:
            label = NOT_SUPPORTED
            other = rng.choice(sentences)[0]
            if other == s:
                continue
            claim = f"{paraphrase_ish(s, rng)} {other}"
        else:
            qa = question_answer(s, names, rng)
            if qa is None:
                continue
            claim, label = qa
        if not claim or (claim == s and label != SUPPORTED):
            continue
        evidence = s
        if rng.random() < 0.35:
            around = [rng.choice(sentences)[0] for _ in range(rng.choice([1, 2]))]
            around.insert(rng.randrange(len(around) + 1), s)
            evidence = " ".join(around)
        out.append(Pair("synthetic", f"synthetic-{len(out)}", key, evidence, claim, label))
    return out
