"""Data of the claim verifier: the public sets read in place, splits by group, synthetic pairs.

Every item becomes an (evidence, claim, label) pair. The evidence window is chosen with
``engine.verifier.evidence`` exactly as at run time. Labels:

* 0 supported, 1 contradicted, 2 not_supported: three-way items (DialFact, synthetic);
* 3 "unsupported": a binary label that only says "not supported" (contradicted or not
  supported); its loss constrains P(supported) against the rest and nothing else.

The sets are read from ``../shared/benchmarks`` (or ``$EVALHOUSE_BENCHMARKS``); nothing is copied.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine.verifier.evidence import (  # noqa: E402
    evidence_for_document,
    select_evidence,
    split_passages,
)

BENCH = Path(os.environ.get("EVALHOUSE_BENCHMARKS", ROOT.parent / "shared" / "benchmarks"))

SUPPORTED, CONTRADICTED, NOT_SUPPORTED, UNSUPPORTED = 0, 1, 2, 3
SETS = (
    "wice_claims",
    "truthfulqa",
    "begin_wow",
    "summedits_sales",
    "dialfact_small",
    "halueval_qa",
)
TRAIN_SETS = ("wice_claims", "truthfulqa", "begin_wow", "summedits_sales", "dialfact_small")
"""halueval_qa is a sanity check only (labels by construction, a length shortcut)."""


@dataclass
class Item:
    """One (evidence, claim) pair of a public set."""

    set: str
    id: str
    group: str
    evidence: str
    claim: str
    label: int
    passages: list[str] = field(default_factory=list)
    """The source document's passages (for synthetic pairs and baselines)."""


def _jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def load_set(name: str) -> list[Item]:
    """All items of one public set as ``Item``s."""
    out: list[Item] = []
    if name == "wice_claims":
        for o in _jsonl(BENCH / "wice_claims" / "items.jsonl"):
            ctx = [s for s in o["context"] if s.strip()]
            out.append(
                Item(
                    name,
                    o["id"],
                    "wice:" + o["meta"]["claim_title"],
                    select_evidence(o["claim"], ctx),
                    o["claim"],
                    SUPPORTED if o["label"] == "SUPPORTED" else UNSUPPORTED,
                    ctx,
                )
            )
    elif name == "truthfulqa":
        for o in _jsonl(BENCH / "truthfulqa" / "items.jsonl"):
            claim = qa_claim(o["question"], o["response"])
            out.append(
                Item(
                    name,
                    o["id"],
                    "tqa:" + o["question"],
                    o["reference"],
                    claim,
                    SUPPORTED if o["label"] == "correct" else UNSUPPORTED,
                    [o["reference"]],
                )
            )
    else:
        for o in _jsonl(BENCH / name / f"{name}.jsonl"):
            claim = o["claim"]
            if name == "halueval_qa":
                claim = qa_claim(o["question"], claim)
            lab = {
                "supported": SUPPORTED,
                "contradicted": CONTRADICTED,
                "not_supported": NOT_SUPPORTED,
                "unsupported": UNSUPPORTED,
            }[o["label"]]
            out.append(
                Item(
                    name,
                    o["id"],
                    f"{name}:{o['group']}",
                    evidence_for_document(claim, o["source"]),
                    claim,
                    lab,
                    split_passages(o["source"]),
                )
            )
    return out


def qa_claim(question: str, answer: str) -> str:
    """A QA answer as a claim: the question followed by the answer."""
    return f"{question.strip()} {answer.strip()}"


def load_all(names: tuple[str, ...] = SETS) -> dict[str, list[Item]]:
    """Every public set by name."""
    return {n: load_set(n) for n in names}


def sample_groups(items: list[Item], cap: int, seed: int) -> list[Item]:
    """Whole groups of ``items`` in a seeded order until ``cap`` items (all when fewer)."""
    if len(items) <= cap:
        return items
    groups = sorted({it.group for it in items})
    random.Random(seed).shuffle(groups)
    size: dict[str, int] = {}
    for it in items:
        size[it.group] = size.get(it.group, 0) + 1
    keep: set[str] = set()
    n = 0
    for g in groups:
        if n >= cap:
            break
        keep.add(g)
        n += size[g]
    return [it for it in items if it.group in keep]


def fold_of(group: str, k: int = 5) -> int:
    """Stable fold of a group (a hash, so every set splits the same way in every run)."""
    return int(hashlib.sha256(group.encode()).hexdigest()[:8], 16) % k


# ---------------------------------------------------------------- synthetic pairs (FactCC)

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
            neg = rng.choice(["not", "'t"]) if False else "not"
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


def _sentences(passages: list[str]) -> list[str]:
    out = []
    for p in passages:
        for s in split_passages(p):
            n = len(s.split())
            if (
                6 <= n <= 45
                and re.search(r"[.!?\"']$", s)
                and s[0] not in "#(*|-["
                and sum(c.isalpha() or c == " " for c in s) > 0.85 * len(s)
            ):
                out.append(s)
    return out


def synthesize(items: list[Item], n: int, seed: int) -> list[Item]:
    """About ``n`` synthetic pairs from the sources of ``items`` (training folds only).

    For a real sentence of a source document: a supported variant (itself, a crop, rounded
    numbers, an answer particle); a contradicted one (negation inserted or removed, a number /
    word number / month / unit changed, a name swapped for another of the same document, an
    antonym); a not-supported one (a sentence of another document of the same set). The
    evidence is chosen from the document's passages with ``select_evidence``, as at run time.
    """
    rng = random.Random(seed)
    docs: dict[tuple[str, str], list[str]] = {}
    for it in items:
        key = (it.set, it.group)
        if key not in docs and it.passages:
            docs[key] = it.passages
    keys = sorted(docs)
    by_set: dict[str, list[tuple[str, str]]] = {}
    for k in keys:
        by_set.setdefault(k[0], []).append(k)
    sents = {k: _sentences(docs[k]) for k in keys}
    keys = [k for k in keys if sents[k]]
    if not keys:
        return []
    set_names = sorted({k[0] for k in keys})
    keys_of = {name: [k for k in keys if k[0] == name] for name in set_names}
    out: list[Item] = []
    tries = 0
    while len(out) < n and tries < n * 20:
        tries += 1
        key = rng.choice(keys_of[rng.choice(set_names)])
        passages = docs[key]
        s = rng.choice(sents[key])
        kind = rng.random()
        label, claim = SUPPORTED, None
        if kind < 0.34:
            claim = paraphrase_ish(s, rng)
        elif kind < 0.72:
            label = CONTRADICTED
            how = rng.choice(["neg", "neg", "num", "ent", "ant"])
            if how == "neg":
                claim = negate(s, rng)
            elif how == "num":
                claim = swap_number(s, rng)
            elif how == "ent":
                claim = swap_entity(s, " ".join(passages), rng)
            else:
                claim = swap_antonym(s, rng)
            if claim is not None and rng.random() < 0.1 and how == "neg":
                claim = "No, " + claim[0].lower() + claim[1:]
        else:
            label = NOT_SUPPORTED
            if len(passages) >= 4 and rng.random() < 0.5:
                # same document, the claim's own passage removed: same topic, not stated
                claim = s
                rest = [p for p in passages if s not in p]
                if len(rest) == len(passages) or not rest:
                    continue
                out.append(
                    Item(
                        "synthetic:" + key[0],
                        f"syn{len(out)}",
                        key[1],
                        select_evidence(claim, rest),
                        claim,
                        label,
                    )
                )
                continue
            others = [k for k in by_set[key[0]] if k != key and sents.get(k)]
            if not others:
                continue
            claim = rng.choice(sents[rng.choice(others)])
        if not claim or (claim == s and label != SUPPORTED):
            continue
        evidence = select_evidence(claim, passages)
        if label == SUPPORTED and s not in evidence:
            continue
        if label == CONTRADICTED and s not in evidence:
            continue
        out.append(Item("synthetic:" + key[0], f"syn{len(out)}", key[1], evidence, claim, label))
    return out
