"""``evalhouse export RUN --format dpo``: preference pairs from a real head-to-head
comparison (the local judge over two real runs), from people's reviews, and the
refusals; every record goes through the lake and ingest into a real warehouse."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from engine.lake import write_part
from engine.models import PairwiseRecord, ReviewRecord
from evalhouse.cli import main

CLAIM = "The Pro plan costs $40 per month."
CASES = [
    {"id": f"q{i}", "domain": "acme.com", "query": f"What does plan {i} cost?",
     "expected_answer": {"text": f"Plan {i} costs ${10 + i} per month.",
                         "claims": [{"id": "c1", "text": f"Plan {i} costs ${10 + i} per month."}]}}
    for i in range(3)
]  # fmt: skip
GOOD = "Plan {i} costs ${p} per month."
BAD = "Plan {i} is free forever, and also comes with a pony."
VAGUE = "Plan {i} has a monthly price."


def _run(tmp: Path, home: str, name: str, answer: str, capsys: pytest.CaptureFixture[str]) -> str:
    path = tmp / f"{name}.jsonl"
    with open(path, "w", encoding="utf-8") as handle:
        for i, case in enumerate(CASES):
            text = answer.format(i=i, p=10 + i)
            handle.write(json.dumps({**case, "response": text}) + "\n")
    assert main(["run", "--test-set", str(path), "--name", name, "--home", home]) in (0, 1)
    return capsys.readouterr().out.strip().splitlines()[-1]


def _export(home: str, run_id: str, out: Path) -> list[dict[str, object]]:
    assert main(["export", run_id, "--format", "dpo", "--output", str(out), "--home", home]) == 0
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def test_pairs_from_a_local_comparison_and_from_reviews(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = str(tmp_path / "home")
    good = _run(tmp_path, home, "good", GOOD, capsys)
    bad = _run(tmp_path, home, "bad", BAD, capsys)
    assert main(["export", good, "--format", "dpo", "--home", home]) == 2
    assert "has no preference pairs" in capsys.readouterr().err  # nothing judged yet

    assert main(["compare-runs", bad, good, "--home", home]) == 0
    comparison = capsys.readouterr().out.strip().splitlines()[-1]
    rows = _export(home, good, tmp_path / "pairs.jsonl")
    assert len(rows) == 3
    first = rows[0]
    assert (first["prompt"], first["chosen"], first["rejected"]) == (
        "What does plan 0 cost?", "Plan 0 costs $10 per month.", BAD.format(i=0),
    )  # fmt: skip
    assert first["source"] == "local" and first["origin"] == "pairwise"
    assert first["chosen_run"] == good and first["comparison_id"] == comparison
    assert isinstance(first["margin"], float) and 0 < first["margin"] <= 1
    assert _export(home, comparison, tmp_path / "c.jsonl") == rows  # by comparison id too

    # A person prefers run "bad"'s answer to q1 (and says so) over run "good"'s: a reviewed
    # pair that contradicts the judge's pair is left out both ways.
    lake = tmp_path / "home" / "lake"
    now = datetime(2026, 11, 26, 9, 0)

    def review(run: str, sample: str, label: str, reviewer: str) -> None:
        record = ReviewRecord(review_id=f"{run}-{sample}-{reviewer}", run_id=run, iteration=1,
                              sample_id=sample, item="response", label=label,  # type: ignore[arg-type]
                              reviewer=reviewer, reviewed_at=now)  # fmt: skip
        write_part(lake, "reviews", run, 1, [record])

    vague = _run(tmp_path, home, "vague", VAGUE, capsys)  # judged by nobody, reviewed below
    review(good, "q1", "incorrect", "dana")
    review(bad, "q1", "correct", "dana")
    review(good, "q2", "correct", "ravi")
    review(bad, "q2", "partly", "ravi")  # the judge's pair again: kept once
    review(vague, "q2", "incorrect", "ravi")
    review(vague, "q2", "partly", "mei")
    assert main(["ingest", "--home", home]) == 0
    rows = _export(home, good, tmp_path / "pairs2.jsonl")
    by_sample = {(r["sample_id"], r["origin"]): r for r in rows}
    assert ("q1", "pairwise") not in by_sample and ("q1", "review") not in by_sample
    assert sorted(by_sample) == [("q0", "pairwise"), ("q2", "pairwise"), ("q2", "review")]
    reviewed = by_sample[("q2", "review")]
    assert reviewed["source"] == "reviewer:mei, ravi" and reviewed["margin"] == 0.75
    assert (reviewed["chosen"], reviewed["rejected"]) == (
        "Plan 2 costs $12 per month.", "Plan 2 has a monthly price.",
    )  # fmt: skip
    assert (reviewed["chosen_run"], reviewed["rejected_run"]) == (good, vague)


def test_only_position_consistent_decided_judgments_become_pairs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = str(tmp_path / "home")
    good = _run(tmp_path, home, "good", GOOD, capsys)
    bad = _run(tmp_path, home, "bad", BAD, capsys)
    now = datetime(2026, 11, 26, 9, 0)
    common = {"comparison_id": "cmp-llm", "run_a": good, "run_b": bad, "iteration": 1,
              "judge": "openai:gpt-4o-mini", "compared_at": now}  # fmt: skip
    records = [
        PairwiseRecord(**common, sample_id="q0", winner="a", consistent=True, a_first="a",
                       b_first="a"),
        PairwiseRecord(**common, sample_id="q1", winner="tie", consistent=False, a_first="a",
                       b_first="b"),  # position bias: left out
        PairwiseRecord(**common, sample_id="q2", winner=None, error="judge timed out"),
    ]  # fmt: skip
    write_part(tmp_path / "home" / "lake", "pairwise", "cmp-llm", 0, records)
    assert main(["ingest", "--home", home]) == 0
    rows = _export(home, "cmp-llm", tmp_path / "pairs.jsonl")
    assert [(r["sample_id"], r["source"], r["margin"]) for r in rows] == [
        ("q0", "openai:gpt-4o-mini", None)
    ]


def test_an_unknown_run_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = str(tmp_path / "home")
    _run(tmp_path, home, "good", GOOD, capsys)
    assert main(["export", "nope", "--format", "dpo", "--home", home]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "is not a run or a comparison" in lines[0]
