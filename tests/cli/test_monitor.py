"""``evalhouse monitor``: production traces scored as they arrive, each exactly once.

Real trace files (OTLP/JSON with the GenAI conventions) in a folder that grows between
passes, real runs and a real lake; the kill -9 case kills a real ``monitor`` process.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from engine.lake import list_parts
from engine.models import TestCase
from engine.monitor import (
    Budget,
    MonitorError,
    PassPlan,
    monitor_dir,
    pass_lock,
    sampled,
    within_budget,
)
from engine.settings import resolve_paths
from evalhouse.cli import main

ROOT = Path(__file__).resolve().parents[2]
SERIES = "support-bot"


def otlp(first: int, count: int, service: str = SERIES) -> dict[str, object]:
    """``count`` traces of one chat span each (GenAI conventions), ids from ``first``."""

    def attr(key: str, value: str) -> dict[str, object]:
        return {"key": key, "value": {"stringValue": value}}

    spans = [
        {
            "traceId": f"{i:032x}",
            "spanId": f"{i:016x}",
            "name": "chat gpt-4o-mini",
            "kind": 3,
            "startTimeUnixNano": str(1764115200000000000 + i * 10**9),
            "endTimeUnixNano": str(1764115201000000000 + i * 10**9),
            "attributes": [
                attr("gen_ai.operation.name", "chat"),
                attr("gen_ai.request.model", "gpt-4o-mini"),
                attr("gen_ai.prompt.0.role", "user"),
                attr("gen_ai.prompt.0.content", f"How much is plan {i}?"),
                attr("gen_ai.completion.0.role", "assistant"),
                attr("gen_ai.completion.0.content", f"Plan {i} costs ${i} per month."),
            ],
        }
        for i in range(first, first + count)
    ]
    resource = {"attributes": [attr("service.name", service)]}
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": spans}]}]}


def write_traces(folder: Path, name: str, first: int, count: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps(otlp(first, count)), encoding="utf-8")


def results_per_trace(home: Path) -> Counter[str]:
    """How many result rows each sample id has across every run in the lake."""
    counts: Counter[str] = Counter()
    for part in list_parts(resolve_paths(home).lake, ["results"]):
        counts.update(pq.read_table(part.path, columns=["sample_id"]).column(0).to_pylist())
    return counts


def monitor(home: Path, folder: Path, *extra: str) -> int:
    return main(["monitor", str(folder), "--series", SERIES, "--home", str(home), *extra])


# ----------------------------------------------------------------------------- passes


def test_each_pass_scores_only_the_traces_no_run_scored(tmp_path: Path) -> None:
    home, folder = tmp_path / "home", tmp_path / "traces"
    write_traces(folder, "hour-1.json", 0, 6)
    assert monitor(home, folder) == 0
    assert results_per_trace(home) == Counter({f"{i:032x}": 1 for i in range(6)})
    assert monitor(home, folder) == 0  # nothing new: no run
    assert sum(results_per_trace(home).values()) == 6
    write_traces(folder, "hour-2.json", 6, 4)
    assert monitor(home, folder) == 0
    counts = results_per_trace(home)
    assert set(counts) == {f"{i:032x}" for i in range(10)} and set(counts.values()) == {1}
    runs = list(resolve_paths(home).lake.joinpath("runs").glob("run_id=*"))
    assert len(runs) == 2  # the pass with nothing new started none


def test_traces_without_a_reference_score_without_error_rows(tmp_path: Path) -> None:
    home, folder = tmp_path / "home", tmp_path / "traces"
    write_traces(folder, "t.json", 0, 3)
    assert monitor(home, folder) == 0
    rows = [
        pq.read_table(p.path, columns=["error", "flags", "judge_faithfulness"]).to_pylist()
        for p in list_parts(resolve_paths(home).lake, ["results"])
    ]
    flat = [r for part in rows for r in part]
    assert len(flat) == 3 and all(r["error"] is None for r in flat)
    assert all("no_reference" in r["flags"] for r in flat)


def test_the_sample_is_the_same_on_every_pass() -> None:
    ids = [f"{i:032x}" for i in range(10_000)]
    picked = [sampled(SERIES, i, 0.05) for i in ids]
    assert picked == [sampled(SERIES, i, 0.05) for i in ids]
    assert 0.04 < sum(picked) / len(ids) < 0.06
    assert picked != [sampled("other-series", i, 0.05) for i in ids]
    assert all(sampled(SERIES, i, 1.0) for i in ids[:100])


def test_a_sampled_pass_leaves_the_rest_out_for_good(tmp_path: Path) -> None:
    home, folder = tmp_path / "home", tmp_path / "traces"
    write_traces(folder, "t.json", 0, 40)
    assert monitor(home, folder, "--sample", "25%") == 0
    first = set(results_per_trace(home))
    assert 0 < len(first) < 40
    assert first == {f"{i:032x}" for i in range(40) if sampled(SERIES, f"{i:032x}", 0.25)}
    assert monitor(home, folder, "--sample", "25%") == 0
    assert set(results_per_trace(home)) == first


def test_the_budget_keeps_the_oldest_traces_that_fit() -> None:
    cases = [TestCase(id=f"t{i}", query=f"q{i}?", response="a") for i in range(10)]
    plan = PassPlan(cases=list(cases))
    within_budget(plan, Budget(calls=10), lambda chosen: (3 * len(chosen), 0.01 * len(chosen)))
    assert [c.id for c in plan.cases] == ["t0", "t1", "t2"] and plan.over_budget == 7
    plan = PassPlan(cases=list(cases))
    within_budget(plan, Budget(cost_usd=0.055), lambda chosen: (0, 0.01 * len(chosen)))
    assert len(plan.cases) == 5
    plan = PassPlan(cases=list(cases))
    within_budget(plan, Budget(calls=0), lambda chosen: (len(chosen), 0.0))
    assert plan.cases == [] and plan.over_budget == 10


def test_one_pass_of_a_series_at_a_time(tmp_path: Path) -> None:
    folder = monitor_dir(tmp_path, SERIES)
    held = rf"running \(.*\"pid\": {os.getpid()}"
    with pass_lock(folder), pytest.raises(MonitorError, match=held), pass_lock(folder):
        pass
    with pass_lock(folder):  # released
        pass


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--sample", "0"], "--sample: '0': the sample must be above 0"),
        (["--every", "1s"], "--every: '1s': at least 10s between passes"),
        (["--max-calls", "-1"], "--max-calls -1: must be 0 or more"),
        (["--name", "x"], "drop --test-set/--name"),
    ],
)
def test_bad_flags_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    write_traces(tmp_path / "t", "t.json", 0, 1)
    assert monitor(tmp_path / "home", tmp_path / "t", *extra) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_a_missing_folder_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert monitor(tmp_path / "home", tmp_path / "nowhere") == 2
    assert "nowhere: no such file or folder" in capsys.readouterr().err


# ----------------------------------------------------------------------------- kill -9


@pytest.mark.slow
def test_kill_9_mid_pass_then_every_trace_is_scored_exactly_once(tmp_path: Path) -> None:
    home, folder = tmp_path / "home", tmp_path / "traces"
    write_traces(folder, "big.json", 0, 400)
    command = [
        *(sys.executable, "-m", "evalhouse.cli", "monitor", str(folder), "--series", SERIES),
        *("--home", str(home), "--no-ingest", "--workers", "1"),
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if 0 < sum(results_per_trace(home).values()) < 400:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the pass ended before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = sum(results_per_trace(home).values())
    assert 0 < partial < 400
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"{partial} scored before" in done.stderr
    counts = results_per_trace(home)
    assert len(counts) == 400 and set(counts.values()) == {1}
