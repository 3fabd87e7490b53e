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
