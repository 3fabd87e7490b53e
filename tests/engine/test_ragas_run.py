"""A real run (local embedder, local judge, lake files) of a RAGAS file that has a reference
answer and no hand-written claims: claims rows appear, derived from the reference."""

from __future__ import annotations

import csv
from pathlib import Path

from engine.lake import read_table
from engine.models import RunConfig
from engine.runner import run_evaluation
from engine.settings import Paths
from engine.testsets import load_test_set

# RAGAS's own dataset layout (user_input, response, retrieved_contexts, reference), with
# list cells in the Python repr RAGAS writes; the second row is a refusal, the third
# contradicts its reference.
HEADER = ["user_input", "response", "retrieved_contexts", "reference"]
ROWS = [
    [
        "When was the first super bowl?",
        "The first superbowl was held on Jan 15, 1967.",
        "['The First AFL-NFL World Championship Game was played on January 15, 1967, "
        "in Los Angeles.']",
        "The first superbowl was held on January 15, 1967 and it was played in Los Angeles.",
    ],
    [
        "Who won the most super bowls?",
        "I'm not sure, you may want to check the NFL website.",
        "['The Steelers and Patriots have each won six.']",
        "The Patriots and the Steelers have each won six Super Bowls.",
    ],
    [
        "How much is the Pro plan?",
        "The Pro plan costs $25 per month.",
        "['The Pro plan costs $20 per month and includes 100 GB of storage.']",
        "The Pro plan costs $20 per month and includes 100 GB of storage.",
    ],
]


def test_ragas_file_gets_derived_claims_rows(home: Paths, tmp_path: Path) -> None:
    path = tmp_path / "ragas.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle, quoting=csv.QUOTE_ALL).writerows([HEADER, *ROWS])
    test_set = load_test_set(path)
    config = RunConfig(name="ragas", test_set=str(path), judge="local", embedder="local")
    out = run_evaluation(config, home, test_set=test_set)
    assert (out.status, out.samples, out.errors) == ("completed", 3, 0)

    claims = read_table(home.lake, "claims", out.run_id).to_pylist()
    by_sample: dict[str, list[dict[str, object]]] = {}
    for row in claims:
        by_sample.setdefault(str(row["sample_id"]), []).append(row)
    assert {r["claims_source"] for r in claims} == {"derived"}
    assert all(str(r["claim_id"]).startswith("d") for r in claims)
    first, refusal, pro = (by_sample[f"row-{n}"] for n in (1, 2, 3))
    assert [r["claim_text"] for r in first] == [
        "The first superbowl was held on January 15, 1967",
        "It was played in Los Angeles",
    ]
    assert first[0]["status"] == "found"
    assert [r["status"] for r in refusal] == ["missing"]
    assert [(r["claim_text"], r["status"], r["rule"]) for r in pro] == [
        ("The Pro plan costs $20 per month", "contradicted", "number"),
        ("The Pro plan includes 100 GB of storage", "missing", None),
    ]

    results = {r["sample_id"]: r for r in read_table(home.lake, "results", out.run_id).to_pylist()}
    assert results["row-2"]["abstained"] is True and "abstained" in results["row-2"]["flags"]
    assert results["row-2"]["completeness"] == 0.0
    assert results["row-1"]["abstained"] is False and results["row-1"]["completeness"] == 50.0
    assert results["row-3"]["completeness"] == 0.0
    assert "contradicted_claim" in results["row-3"]["flags"]
    verdicts = read_table(home.lake, "verdicts", out.run_id).to_pylist()
    assert not [v for v in verdicts if v["sample_id"] == "row-2"]
