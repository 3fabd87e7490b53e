"""The verifier's training data: the entailment pairs of ``../shared/training/nli``.

Nine public sources, read in place (never copied), each row an (evidence, claim, label) pair:

* claim-vs-evidence sources (``FACT_SOURCES``: VitaminC, FEVER, Fool Me Twice), the bulk of a
  batch;
* caption-style NLI (``NLI_SOURCES``: SNLI, MultiNLI, Breaking-NLI), which transfers worst and
  is kept to a fixed minority of every batch;
* synthetic pairs made from the training evidence sentences by ``synthetic.synthesize``.

Labels are 0 supported, 1 contradicted, 2 not supported, 3 "unsupported" (binary: not
supported, could be either negative; trained with -log(1 - P(supported))).

Validation is 5% of the pairs, chosen by **merged group**: groups that share a claim or an
evidence text anywhere in the nine files are merged first (the folder's README), so no text of
a validation pair is ever trained on. The project's benchmark sets (``../shared/benchmarks``) are
never read here.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import random
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NLI_DIR = Path(os.environ.get("EVALHOUSE_NLI", ROOT.parent / "shared" / "training" / "nli"))

SUPPORTED, CONTRADICTED, NOT_SUPPORTED, UNSUPPORTED = 0, 1, 2, 3
LABEL_IDS = {
    "supported": SUPPORTED,
    "contradicted": CONTRADICTED,
    "not_supported": NOT_SUPPORTED,
    "unsupported": UNSUPPORTED,
}

FACT_SOURCES = (
    "vitaminc_real",
    "vitaminc_synthetic",
    "fever_symmetric",
    "fever_adversarial",
    "fever_nli_binary",
    "fm2",
)
NLI_SOURCES = ("snli", "mnli_binary", "breaking_nli")

PRIORITY_SOURCES = frozenset({"vitaminc_real", "fever_symmetric", "fever_adversarial", "fm2"})
"""Fact sources taken whole before the rest fills a budget: real, contrastive claim-vs-evidence
pairs (VitaminC's twins differ by one revision of the evidence, the swapped-number case)."""

VALIDATION_SHARE = 20
"""One merged group in ``VALIDATION_SHARE`` (5%) is validation."""


@dataclass(frozen=True)
class Pair:
    """One training or validation pair."""

    source: str
    id: str
    split_key: str
    evidence: str
    claim: str
    label: int


def read_rows(directory: Path = NLI_DIR) -> list[dict[str, str]]:
    """Every row of every ``*.jsonl.gz`` file, files in name order (the README's snippet)."""
    rows: list[dict[str, str]] = []
    for path in sorted(directory.glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            rows.extend(json.loads(line) for line in fh if line.strip())
    if not rows:
        raise SystemExit(f"{directory}: no *.jsonl.gz training files")
    return rows


def merged_keys(rows: list[dict[str, str]]) -> list[str]:
    """Each row's merged group: union-find over group, claim text and evidence text."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for r in rows:
        for other in ("c\t" + r["claim"], "e\t" + r["evidence"]):
            a, b = find("g\t" + r["group"]), find(other)
            if a != b:
                parent[b] = a
    return [find("g\t" + r["group"]) for r in rows]


def is_validation(split_key: str) -> bool:
    """Stable 5% of merged groups (a hash, the same in every run and on every machine)."""
    return int(hashlib.sha256(split_key.encode()).hexdigest()[:8], 16) % VALIDATION_SHARE == 0


def load_pairs(directory: Path = NLI_DIR) -> tuple[list[Pair], list[Pair]]:
    """(training pairs, validation pairs)."""
    rows = read_rows(directory)
    keys = merged_keys(rows)
    train: list[Pair] = []
    val: list[Pair] = []
    for r, key in zip(rows, keys, strict=True):
        p = Pair(r["source"], r["id"], key, r["evidence"], r["claim"], LABEL_IDS[r["label"]])
        (val if is_validation(key) else train).append(p)
    return train, val


def fact_budget(pool: list[Pair], n: int, rng: random.Random) -> list[Pair]:
    """``n`` fact pairs: the priority sources whole (seeded order), the rest sampled evenly."""
    first = [p for p in pool if p.source in PRIORITY_SOURCES]
    rest = [p for p in pool if p.source not in PRIORITY_SOURCES]
    rng.shuffle(first)
    rng.shuffle(rest)
    if n <= len(first):
        return first[:n]
    return first + rest[: n - len(first)]


def cycle(pool: list[Pair], n: int, rng: random.Random) -> list[Pair]:
    """``n`` pairs from ``pool``: seeded passes without replacement, reshuffled each pass."""
    out: list[Pair] = []
    while len(out) < n and pool:
        order = pool[:]
        rng.shuffle(order)
        out.extend(order[: n - len(out)])
    return out
