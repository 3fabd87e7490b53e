"""The runner in-process, with small fakes of the analyzer and judge (same signatures).

The fakes live here and are reused by the crash tests and the benchmark: ``FakeAnalyzer``
(``analyze_batch``), ``FakeOutcome`` (``result_fields``/``usage``/``verdict_records``) and
``fake_components``.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from engine.judges.base import Judge, JudgeError, Usage
from engine.lake import list_parts, read_table
from engine.models import (
    AttributionRecord,
    ClaimRecord,
    HighlightRecord,
    RagWeights,
    RunConfig,
    SampleKey,
    TestCase,
    VerdictRecord,
)
from engine.progress import NullProgress
from engine.run import loop as runner_mod
from engine.runner import (
    Components,
    RunError,
    run_evaluation,
)
from engine.scoring.analyzer import AnalysisError
from engine.settings import Paths
from engine.targets import Target, build_target
from engine.testsets import LoadedTestSet, load_test_set

# ----------------------------------------------------------------------------- fakes


@dataclass(frozen=True)
class FakeAnalysis:
    """Scores derived from the response length, so they are checkable."""

    case: TestCase
    response: str

    def result_fields(self) -> dict[str, Any]:
        score = float(min(100, len(self.response)))
        return {
            "accuracy": score,
            "accuracy_tier": "excellent" if score >= 85 else "poor",
            "completeness": 50.0,
            "completeness_tier": "fair",
            "attribution": 0.0,
            "attribution_tier": "poor",
            "flags": ["fake_analyzer"],
        }

    def claim_records(self, key: SampleKey) -> list[ClaimRecord]:
        return [
            ClaimRecord(
                run_id=key.run_id,
                iteration=key.iteration,
                sample_id=key.sample_id,
                claim_id=claim.id,
                claim_text=claim.text,
                importance=claim.importance,
                found=True,
                similarity=0.9,
            )
            for claim in self.case.expected_answer.claims
        ]

    def highlight_records(self, key: SampleKey) -> list[HighlightRecord]:
        return [
            HighlightRecord(
                run_id=key.run_id,
                iteration=key.iteration,
                sample_id=key.sample_id,
                response_start=0,
                response_end=len(self.response),
                similarity=0.5,
            )
        ]

    def attribution_records(self, key: SampleKey) -> list[AttributionRecord]:
        return []


@dataclass
class FakeAnalyzer:
    """Counts batches; fails samples whose response contains ``ANALYZER_FAIL``."""

    threshold: float = 0.6
    batches: list[int] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def analyze_batch(self, items: Sequence[tuple[TestCase, str]]) -> list[Any]:
        with self.lock:
            self.batches.append(len(items))
        return [
            AnalysisError("embedder exploded")
            if "ANALYZER_FAIL" in response
            else FakeAnalysis(case, response)
            for case, response in items
        ]


@dataclass(frozen=True)
class FakeOutcome:
    """A judge outcome: faithfulness 5 unless the response says otherwise."""

    faithfulness: float
    usage: Usage = field(default_factory=lambda: Usage(input_tokens=10, output_tokens=5))
    warnings: tuple[str, ...] = ()

    def result_fields(self) -> dict[str, Any]:
        return {
            "judge_faithfulness": self.faithfulness,
            "judge_completeness": 4.0,
            "judge_reasoning": f"Faithfulness {self.faithfulness:g}: fake\nCompleteness 4: fake",
            "passed": self.faithfulness >= 4,
            "overall": (self.faithfulness + 4.0) / 2,
            "claim_faithfulness": 1.0,
        }

    def verdict_records(self, key: SampleKey) -> list[VerdictRecord]:
        return [
            VerdictRecord(
                run_id=key.run_id,
                iteration=key.iteration,
                sample_id=key.sample_id,
                claim_text="the response",
                verdict="SUPPORTED",
            )
        ]


class FakeJudge:
    """A stand-in Judge: the runner only passes it to ``judge_sample``."""

    name = "fake-judge"

    async def extract_claims(self, response: str) -> Any:
        raise NotImplementedError  # pragma: no cover - never called by the fake judge_sample

    async def verify_claim(self, claim: str, context: Sequence[str]) -> Any:
        raise NotImplementedError  # pragma: no cover

    async def score_rubric(self, question: str, context: Sequence[str], answer: str) -> Any:
        raise NotImplementedError  # pragma: no cover


@dataclass
class JudgeScript:
    """Counts judge calls per sample and in flight; fails as told."""

    delay: float = 0.0
    fail_first: set[str] = field(default_factory=set)
    always_fail: set[str] = field(default_factory=set)
    calls: Counter[str] = field(default_factory=Counter)
    in_flight: int = 0
    max_in_flight: int = 0

    async def __call__(
        self, case: TestCase, response: str, judge: Judge, weights: RagWeights
    ) -> FakeOutcome:
        self.calls[case.id] += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            if case.id in self.always_fail or (
                case.id in self.fail_first and self.calls[case.id] == 1
            ):
                raise JudgeError(f"judge unavailable for {case.id}")
            return FakeOutcome(faithfulness=2.0 if "WRONG" in response else 5.0)
        finally:
            self.in_flight -= 1


def fake_components(
    target: Target | None = None, script: JudgeScript | None = None
) -> tuple[Components, FakeAnalyzer, JudgeScript]:
    """Components with a fake analyzer and judge (and the recorded target by default)."""
    analyzer = FakeAnalyzer()
    script = script or JudgeScript()
    components = Components(
        target=target or build_target("recorded"),
        analyzer=analyzer,
        judge=FakeJudge(),
        judge_sample=script,
        embedder_name="fake-embedder",
        judge_name="fake-judge",
    )
    return components, analyzer, script


def write_cases(path: Path, n: int, *, prefix: str = "s", response: bool = True) -> Path:
    """A native JSONL test set of ``n`` cases with one claim each."""
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(n):
            case: dict[str, Any] = {
                "id": f"{prefix}{i:04d}",
                "domain": "acme.example",
                "query": f"Question {i}?",
                "expected_answer": {"text": f"Answer {i}.", "claims": [{"id": "c1", "text": "x"}]},
                "context": [f"Passage {i}."],
            }
            if response:
                case["response"] = f"Answer {i} is here."
            handle.write(json.dumps(case) + "\n")
    return path


def config_for(test_set: LoadedTestSet, **over: Any) -> RunConfig:
    """A run config for a test set."""
    fields: dict[str, Any] = {"name": "t", "test_set": str(test_set.path)}
    fields.update(over)
    return RunConfig(**fields)


def run_states(paths: Paths, run_id: str) -> list[str]:
    """Statuses written for a run, in write order."""
    table = read_table(paths.lake, "runs", run_id, 0).to_pylist()
    return [r["status"] for r in sorted(table, key=lambda r: r["updated_at"])]


def result_ids(paths: Paths, run_id: str, iteration: int | None = None) -> list[tuple[int, str]]:
    """(iteration, sample_id) of every result row of a run."""
    rows = read_table(paths.lake, "results", run_id, iteration).to_pylist()
    return [(r["iteration"], r["sample_id"]) for r in rows]


# ----------------------------------------------------------------------------- tests


@pytest.fixture
def cases3(tmp_path: Path) -> LoadedTestSet:
    return load_test_set(write_cases(tmp_path / "three.jsonl", 3))


def test_run_writes_every_table_and_state(home: Paths, cases3: LoadedTestSet) -> None:
    components, _, script = fake_components()
    flushes: list[int] = []
    sink = NullProgress()
    out = run_evaluation(
        config_for(cases3, iterations=2),
        home,
        test_set=cases3,
        components=components,
        after_flush=lambda: flushes.append(1),
        progress=sink,
    )
    assert (out.status, out.samples, out.errors, out.exit_code) == ("completed", 6, 0, 0)
    assert sorted(result_ids(home, out.run_id)) == [
        (i, f"s{j:04d}") for i in (1, 2) for j in range(3)
    ]
    assert run_states(home, out.run_id) == ["running", "completed"]
    run = read_table(home.lake, "runs", out.run_id, 0).to_pylist()[-1]
    assert run["test_set_hash"] == cases3.sha256 and run["samples"] == 3
    assert run["judge"] == "fake-judge" and run["embedder"] == "fake-embedder"
    assert run["finished_at"] is not None and run["host"]
    assert json.loads(run["config"])["iterations"] == 2
    for table, n in (("claims", 6), ("highlights", 6), ("verdicts", 6), ("iteration_metrics", 2)):
        assert read_table(home.lake, table, out.run_id).num_rows == n, table
    rows = read_table(home.lake, "results", out.run_id).to_pylist()
    first = rows[0]
    assert first["judge_faithfulness"] == 5.0 and first["accuracy"] == 17.0
    assert first["judge_input_tokens"] == 10 and first["flags"] == ["fake_analyzer"]
    assert first["ai_provider"] == "recorded" and len(first["sample_hash"]) == 64
    metrics = read_table(home.lake, "iteration_metrics", out.run_id).to_pylist()
    assert {m["iteration"] for m in metrics} == {1, 2}
    assert metrics[0]["pass_rate"] == 1.0 and metrics[0]["accuracy_mean"] == pytest.approx(17.0)
    assert json.loads(metrics[0]["low_faithfulness"])["categories"]["mixed"]["count"] == 0
    assert len(flushes) == 3  # after each iteration and at the end
    assert sum(script.calls.values()) == 6
    assert sink.last is not None and sink.last[:2] == (6, 6)
    progress = json.loads(
        (home.progress / out.run_id / "iteration-2" / ".progress.json").read_text()
    )
    assert progress["testSetName"] == "three" and progress["iterationNumber"] == 2
    assert progress["statistics"] == {
        "totalQuestions": 3,
        "completedQuestions": 3,
        "pendingQuestions": 0,
        "completionPercentage": 100.0,
    }
    entry = progress["entries"][0]
    assert set(entry) == {"hash", "queryLogId", "question", "completedAt", "result"}
    assert entry["result"]["faithfulnessScore"] == 5.0 and entry["result"]["passed"] is True
    assert entry["completedAt"].endswith("Z")


def test_failures_are_rows_and_decide_the_exit_code(home: Paths, tmp_path: Path) -> None:
    path = write_cases(tmp_path / "mix.jsonl", 4)
    lines = path.read_text().splitlines()
    bad = [json.loads(x) for x in lines]
    del bad[0]["response"]  # target error
    bad[1]["response"] = "ANALYZER_FAIL here"  # analyzer error
    bad[2]["response"] = "this is WRONG"  # low faithfulness, not an error
    path.write_text("\n".join(json.dumps(b) for b in bad) + "\n")
    ts = load_test_set(path)
    script = JudgeScript(always_fail={"s0003"})
    components, _, _ = fake_components(script=script)
    out = run_evaluation(
        config_for(ts, retries=1, extra={"x": 1}), home, test_set=ts, components=components
    )
    assert (out.status, out.errors, out.exit_code) == ("failed", 3, 1)
    assert out.failed_fraction == pytest.approx(0.75)
    rows = {r["sample_id"]: r for r in read_table(home.lake, "results", out.run_id).to_pylist()}
    assert rows["s0000"]["error"].startswith("target: case 's0000' has no recorded response")
    assert rows["s0000"]["response"] == "" and rows["s0000"]["accuracy"] is None
    assert rows["s0001"]["error"] == "analyzer: embedder exploded"
    assert rows["s0001"]["judge_faithfulness"] == 5.0  # the judge still scored it
    assert rows["s0002"]["error"] is None and rows["s0002"]["judge_faithfulness"] == 2.0
    assert "after 2 attempts" in rows["s0003"]["error"] and script.calls["s0003"] == 2
    assert run_states(home, out.run_id)[-1] == "failed"
    low = json.loads(
        read_table(home.lake, "iteration_metrics", out.run_id).to_pylist()[0]["low_faithfulness"]
    )
    assert low["categories"]["mostly_false"]["count"] == 1


def test_threshold_allows_some_failures(home: Paths, tmp_path: Path) -> None:
    ts = load_test_set(write_cases(tmp_path / "a.jsonl", 4))
    components, _, _ = fake_components(script=JudgeScript(always_fail={"s0000"}))
    out = run_evaluation(
        config_for(ts, retries=0, max_failed_fraction=0.3),
        home,
        test_set=ts,
        components=components,
    )
    assert (out.status, out.errors, out.exit_code) == ("completed", 1, 0)


def test_judge_errors_are_retried(home: Paths, cases3: LoadedTestSet) -> None:
    script = JudgeScript(fail_first={"s0001"})
    components, _, _ = fake_components(script=script)
    out = run_evaluation(config_for(cases3), home, test_set=cases3, components=components)
    assert out.errors == 0 and script.calls["s0001"] == 2


def test_flushes_every_50_samples_and_batches_the_analyzer(home: Paths, tmp_path: Path) -> None:
    ts = load_test_set(write_cases(tmp_path / "many.jsonl", 120))
    components, analyzer, script = fake_components(script=JudgeScript(delay=0.005))
    out = run_evaluation(config_for(ts, concurrency=8), home, test_set=ts, components=components)
    assert out.samples == 120
    parts = [p for p in list_parts(home.lake, ["results"]) if p.run_id == out.run_id]
    sizes = sorted(pq.read_metadata(p.path).num_rows for p in parts)
    assert len(parts) >= 3 and max(sizes) <= 50 + 8  # a flush may include samples finishing
    assert sum(sizes) == 120
    assert max(analyzer.batches) > 1  # samples share analyzer batches
    assert 1 < script.max_in_flight <= 8


def test_time_based_flush(home: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner_mod, "FLUSH_SECONDS", 0.3)
    ts = load_test_set(write_cases(tmp_path / "slow.jsonl", 6))
    components, _, _ = fake_components(script=JudgeScript(delay=0.2))
    out = run_evaluation(config_for(ts, concurrency=1), home, test_set=ts, components=components)
    parts = [p for p in list_parts(home.lake, ["results"]) if p.run_id == out.run_id]
    assert len(parts) >= 3


def test_only_sample_ids(home: Paths, cases3: LoadedTestSet) -> None:
    components, _, _ = fake_components()
    out = run_evaluation(
        config_for(cases3),
        home,
        test_set=cases3,
        components=components,
        only_sample_ids={"s0002"},
    )
    assert result_ids(home, out.run_id) == [(1, "s0002")]
    with pytest.raises(RunError, match="not in the test set: zzz"):
        run_evaluation(
            config_for(cases3),
            home,
            test_set=cases3,
            components=fake_components()[0],
            only_sample_ids={"zzz"},
        )


def test_after_flush_errors_are_reported_not_fatal(home: Paths, cases3: LoadedTestSet) -> None:
    def boom() -> None:
        raise RuntimeError("warehouse is locked")

    sink = NullProgress()
    out = run_evaluation(
        config_for(cases3),
        home,
        test_set=cases3,
        components=fake_components()[0],
        after_flush=boom,
        progress=sink,
    )
    assert out.status == "completed"
    assert sum("warehouse is locked" in m for m in sink.messages) == 2


def test_an_unexpected_exception_marks_the_run_interrupted(
    home: Paths, cases3: LoadedTestSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: Any, iteration: int) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(runner_mod.Runner, "_close_iteration", broken)
    components, _, _ = fake_components()
    with pytest.raises(OSError, match="disk full"):
        run_evaluation(config_for(cases3), home, test_set=cases3, components=components)
    run_id = read_table(home.lake, "runs", "x", 0).num_rows  # no such run
    assert run_id == 0
    (run_dir,) = (home.lake / "runs").iterdir()
    rid = run_dir.name.removeprefix("run_id=")
    assert run_states(home, rid) == ["running", "interrupted"]
    assert len(result_ids(home, rid)) == 3  # flushed before the failure
    monkeypatch.undo()
    out = run_evaluation(config_for(cases3), home, test_set=cases3, components=fake_components()[0])
    assert out.run_id == rid and out.samples == 3


def test_contexts_from_the_target_replace_the_case_context(
    home: Paths, cases3: LoadedTestSet
) -> None:
    seen: list[tuple[str, ...] | None] = []

    class WithContexts:
        name = "ctx-target"

        async def respond(self, case: TestCase) -> Any:
            from engine.targets import TargetResponse

            return TargetResponse(
                text="answer",
                contexts=("retrieved",),
                latency_ms=12.5,
                input_tokens=3,
                output_tokens=4,
                cost_usd=0.01,
            )

        async def aclose(self) -> None:
            return None

    script = JudgeScript()

    async def spy(case: TestCase, response: str, judge: Judge, weights: RagWeights) -> Any:
        seen.append(case.context)
        return await script(case, response, judge, weights)

    components, _, _ = fake_components(target=WithContexts())
    components.judge_sample = spy
    out = run_evaluation(config_for(cases3), home, test_set=cases3, components=components)
    assert seen == [("retrieved",)] * 3
    row = read_table(home.lake, "results", out.run_id).to_pylist()[0]
    assert (row["latency_ms"], row["input_tokens"], row["output_tokens"]) == (12.5, 3, 4)
    assert row["cost_usd"] == pytest.approx(0.01) and out.cost_usd == pytest.approx(0.03)
    assert row["ai_provider"] == "ctx-target"


def test_clock_dates_every_record(home: Paths, cases3: LoadedTestSet) -> None:
    from datetime import datetime

    when = datetime(2026, 1, 5, 9, 30)
    out = run_evaluation(
        config_for(cases3),
        home,
        test_set=cases3,
        components=fake_components()[0],
        clock=lambda: when,
    )
    assert out.run_id.startswith("20260105T093000Z-")
    run = read_table(home.lake, "runs", out.run_id, 0).to_pylist()
    assert {r["started_at"] for r in run} == {when} and run[-1]["finished_at"] == when
    assert {r["scored_at"] for r in read_table(home.lake, "results", out.run_id).to_pylist()} == {
        when
    }
    assert (
        read_table(home.lake, "iteration_metrics", out.run_id).to_pylist()[0]["finished_at"] == when
    )
