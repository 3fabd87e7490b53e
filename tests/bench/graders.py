"""Benchmark: deterministic graders (exact-match, contains, regex, json-schema) over
100,000 outputs. Prints outputs per second per grader type and for all four together.

Run: ``.venv/bin/python -m tests.bench.graders [N]``
"""

from __future__ import annotations

import json
import random
import sys
import time

from engine.graders import GradeInput, build_grader
from engine.graders.base import SyncGrader
from engine.graders.spec import parse_grader
from engine.models import ExpectedAnswer, TestCase

WORDS = [
    "the", "act", "defines", "four", "risk", "tiers", "for", "artificial",
    "intelligence", "systems", "across", "the", "union", "providers", "must", "document",
    "training", "data", "and", "high", "risk", "uses", "need", "conformity", "checks",
]  # fmt: skip

SCHEMA = {
    "type": "object",
    "required": ["title", "authors"],
    "properties": {
        "title": {"type": "string"},
        "authors": {"type": "array", "items": {"type": "string"}},
        "year": {"type": ["integer", "null"]},
    },
}

SPECS = {
    "exact-match": {"type": "exact-match", "options": {"case": "insensitive"}},
    "contains": {
        "type": "contains",
        "options": {"values": ["four", "risk", "tiers"], "case": "insensitive"},
    },
    "regex": {
        "type": "regex",
        "options": {"pattern": r"\b(four|4)\s+risk\s+tiers?\b", "flags": "i"},
    },
    "json-schema": {"type": "json-schema", "options": {"schema": SCHEMA}},
}


def make_inputs(n: int, seed: int = 7) -> tuple[list[GradeInput], list[GradeInput]]:
    """(prose inputs, JSON inputs): n each, varied lengths, a share of exact answers."""
    rng = random.Random(seed)
    case = TestCase(
        id="q1",
        query="What does the EU AI Act define?",
        expected_answer=ExpectedAnswer(text="The Act defines four risk tiers."),
    )
    prose: list[GradeInput] = []
    docs: list[GradeInput] = []
    for i in range(n):
        if i % 10 == 0:
            text = "the act defines four risk tiers."
        else:
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 120))) + "."
        prose.append(GradeInput(output=text, case=case))
        doc: dict[str, object] = {
            "title": f"Paper {i}",
            "authors": [f"Author {j}" for j in range(rng.randint(1, 6))],
            "year": rng.choice([2017, 2018, None]),
        }
        if i % 7 == 0:
            doc["authors"] = [1, "two"]  # invalid
        out = json.dumps(doc)
        docs.append(GradeInput(output=f"```json\n{out}\n```" if i % 5 == 0 else out, case=case))
    return prose, docs


def main() -> None:
    """Grade N outputs (default 100,000) with each deterministic grader; print rates."""
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    prose, docs = make_inputs(n)
    total = 0.0
    for kind, raw in SPECS.items():
        grader = build_grader(parse_grader(raw, f"{kind}.yaml", kind, None))
        assert isinstance(grader, SyncGrader)
        inputs = docs if kind == "json-schema" else prose
        start = time.perf_counter()
        passed = sum(grader.grade_sync(item).passed for item in inputs)
        elapsed = time.perf_counter() - start
        total += elapsed
        print(
            f"{kind}: {n / elapsed:,.0f} outputs/s ({n:,} outputs in {elapsed:.2f} s, "
            f"{passed:,} passed)"
        )
    print(f"all four graders on each output: {n / total:,.0f} outputs/s ({total:.2f} s total)")


if __name__ == "__main__":
    main()
