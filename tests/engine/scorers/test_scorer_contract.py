"""The Scorer contract: a scorer added in one file runs in real runs, failures are one row,
declarations are checked, and stages follow what scorers read."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.lake import read_table
from engine.models import TestCase
from engine.run.pipeline import stages
from engine.scorers import BaseScorer, SampleInput, ScoreOutcome
from engine.settings import Paths
from evalhouse.cli import main
from tests.engine.scorers import length_scorer
from warehouse.queries import Warehouse


@pytest.fixture
def with_length_scorer() -> Iterator[None]:
    length_scorer.install()
    try:
        yield
    finally:
        length_scorer.uninstall()


def _cases(path: Path) -> Path:
    rows = [
        ("a", "Acme Cloud costs 10 dollars per month for the basic plan."),
        ("b", "Ten dollars."),
        ("c", "SCORER_BOOM but otherwise a fine answer about the price."),
    ]
    with open(path, "w", encoding="utf-8") as handle:
        for case_id, response in rows:
            case = {
                "id": case_id,
                "domain": "acme.example",
                "query": "How much does the basic plan cost?",
                "response": response,
                "expected_answer": {"text": "The basic plan costs 10 dollars per month."},
                "ground_truth": [
                    {"chunk_id": "p#0", "page_url": "https://acme.example/p", "text": "Basic: $10"}
                ],
            }
            handle.write(json.dumps(case) + "\n")
    return path


def test_an_added_scorer_runs_in_a_real_run_and_reaches_the_warehouse(
    with_length_scorer: None, home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    test_set = _cases(tmp_path / "cases.jsonl")
    code = main(["run", "--home", str(home.home), "--test-set", str(test_set), "--name", "len",
                 "--max-failed", "0.5"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    run_id = out.strip().splitlines()[-1]
    frame = (
        Warehouse(home.warehouse)
        .sql(
            "SELECT sample_id, metric, value, label FROM sample_scores WHERE run_id = $run "
            "ORDER BY sample_id, metric",
            {"run": run_id},
        )
        .frame
    )
    rows = [tuple(r) for r in frame.iter_rows()]
    assert [(s, m, v) for s, m, v, _ in rows if m == "words"] == [("a", "words", 11.0),
                                                               ("b", "words", 2.0)]  # fmt: skip
    seen = {s: (v, label) for s, m, v, label in rows if m == "accuracy_seen"}
    assert seen["a"][1] == "long" and seen["b"][1] == "short"
    assert seen["a"][0] is not None and 0 <= seen["a"][0] <= 100  # the analyzer's, read
    results = {r["sample_id"]: r for r in read_table(home.lake, "results", run_id).to_pylist()}
    assert "long_answer" in results["a"]["flags"] and "long_answer" not in results["b"]["flags"]
    assert results["a"]["accuracy"] == seen["a"][0]


def test_a_scorer_that_raises_gives_exactly_one_error_row(
    with_length_scorer: None, home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    test_set = _cases(tmp_path / "cases.jsonl")
    code = main(["run", "--home", str(home.home), "--test-set", str(test_set), "--name", "boom",
                 "--no-ingest"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 1, err  # one error row of three is over the default max-failed of 0
    run_id = out.strip().splitlines()[-1]
    results = read_table(home.lake, "results", run_id).to_pylist()
    assert sorted(r["sample_id"] for r in results) == ["a", "b", "c"]
    errors = {r["sample_id"]: r["error"] for r in results if r["error"] is not None}
    assert errors == {"c": "response-length: cannot count words in an exploding answer"}
    boom = next(r for r in results if r["sample_id"] == "c")
    assert boom["accuracy"] is not None  # the other scorers' findings stay on the row
    assert read_table(home.lake, "sample_scores", run_id).num_rows == 4  # a and b only


class _Provides(BaseScorer):
    def __init__(self, name: str, reads: set[str], provides: set[str]) -> None:
        self.name = name
        self.reads = frozenset(reads)
        self.provides = frozenset(provides)

    async def score(self, sample: SampleInput) -> ScoreOutcome:
        return ScoreOutcome(fields={f: 1.0 for f in self.provides})


def test_stages_follow_what_scorers_read_and_bad_declarations_are_refused() -> None:
    first = _Provides("first", set(), {"accuracy"})
    second = _Provides("second", {"accuracy"}, {"overall"})
    third = _Provides("third", {"overall", "accuracy"}, set())
    alone = _Provides("alone", {"latency_ms"}, set())  # read, but no scorer provides it
    got = stages([third, second, alone, first])
    assert [[s.name for s in stage] for stage in got] == [["alone", "first"], ["second"],
                                                          ["third"]]  # fmt: skip
    with pytest.raises(TypeError, match="both provide 'accuracy'"):
        stages([first, _Provides("again", set(), {"accuracy"})])
    with pytest.raises(TypeError, match="unknown results fields: \\['acuracy'\\]"):
        stages([_Provides("typo", set(), {"acuracy"})])
    loop_a = _Provides("a", {"overall"}, {"accuracy"})
    loop_b = _Provides("b", {"accuracy"}, {"overall"})
    with pytest.raises(TypeError, match="depends on itself"):
        stages([loop_a, loop_b])


def test_an_outcome_outside_its_declaration_is_an_error_not_a_silent_drop() -> None:
    from datetime import datetime

    from engine.run.lanes import Lane
    from engine.run.pipeline import SamplePipeline
    from engine.targets import build_target

    class Liar(BaseScorer):
        name = "liar"
        provides = frozenset({"accuracy"})

        async def score(self, sample: SampleInput) -> ScoreOutcome:
            return ScoreOutcome(fields={"accuracy": 50.0, "completeness": 99.0})

    pipeline = SamplePipeline([Liar()], run_id="r", retries=0, clock=lambda: datetime(2026, 1, 1))
    case = TestCase(id="x", query="q?", response="an answer")
    out = asyncio.run(pipeline.evaluate(case, Lane("", build_target("recorded")), 1))
    assert out.result.error == "liar: returned fields it does not declare: ['completeness']"
    assert out.result.accuracy is None and out.result.completeness is None
