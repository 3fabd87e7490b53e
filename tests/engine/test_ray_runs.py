"""Runs on Ray (``evalhouse run --ray``): the same rows as one process, and what a killed
worker, a killed driver and a cancelled run leave behind.

One local Ray per module, started in this process the way the runner starts its own
(``RayPool.start``): the in-process run reuses it, the CLI runs connect to its address.
The test set is the demo's week 1, cut short to keep the module quick on two shared cores;
scoring is the real local default (local embedder, local judge), nothing leaves the host.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from engine.demo import build_weekly_test_sets
from engine.lake import list_parts, read_table
from engine.models import RunConfig
from engine.run.distributed import RayPool
from engine.runner import run_evaluation
from engine.settings import Paths, resolve_paths
from engine.testsets import load_test_set

pytestmark = pytest.mark.slow
SCORES = [
    "response", "accuracy", "accuracy_tier", "completeness", "completeness_tier",
    "attribution", "attribution_tier", "judge_faithfulness", "judge_completeness", "passed",
    "claim_faithfulness", "overall", "error", "flags", "domain", "ai_provider",
]  # fmt: skip
CHILDREN = ["claims", "highlights", "attributions", "verdicts"]


@pytest.fixture(scope="module")
def ray_address() -> Iterator[str]:
    pool = RayPool.start(None)
    try:
        yield str(pool.ray.get_runtime_context().gcs_address)
    finally:
        pool.close()


@pytest.fixture(scope="module")
def demo_cases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 20 cases of the demo's week-1 test set (native JSONL, as users get it)."""
    folder = tmp_path_factory.mktemp("demo")
    _, path, _ = build_weekly_test_sets(folder, weeks=1)[0]
    short = folder / "demo-20.jsonl"
    short.write_text("".join(path.read_text().splitlines(keepends=True)[:20]))
    return short


def cli(home: Path, test_set: Path, *extra: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "evalhouse.cli", "--home", str(home), "run"]
    command += ["--test-set", str(test_set), "--name", "on-ray", "--no-ingest", *extra]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def results_parts(home: Path) -> int:
    return len(list_parts(resolve_paths(home).lake, ["results"]))


def wait_for(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def shard_workers() -> list[psutil.Process]:
    """Ray worker processes of this module's Ray that are scoring a shard right now."""
    found = []
    for proc in psutil.Process(os.getpid()).children(recursive=True):
        try:
            if "score_shard" in " ".join(proc.cmdline()):
                found.append(proc)
        except psutil.Error:
            continue
    return found


def the_run(home: Path) -> str:
    runs = {p.run_id for p in list_parts(resolve_paths(home).lake, ["runs"])}
    assert len(runs) == 1, runs
    return runs.pop()


def assert_exactly_once(home: Path, run_id: str, expected: set[str]) -> None:
    """One result row per sample, and child rows only of published samples, none twice."""
    paths = resolve_paths(home)
    ids = [r["sample_id"] for r in read_table(paths.lake, "results", run_id).to_pylist()]
    assert Counter(ids) == Counter(expected)
    claims = read_table(paths.lake, "claims", run_id).to_pylist()
    keys = [(r["sample_id"], r["claim_id"]) for r in claims]
    assert len(keys) == len(set(keys))
    assert {k[0] for k in keys} <= expected


def statuses(home: Path, run_id: str) -> list[str]:
    rows = read_table(resolve_paths(home).lake, "runs", run_id, 0).to_pylist()
    return [r["status"] for r in sorted(rows, key=lambda r: r["updated_at"])]


def case_ids(test_set: Path) -> set[str]:
    return {json.loads(line)["id"] for line in test_set.read_text().splitlines()}


def by_sample(paths: Paths, table: str, run_id: str) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for row in read_table(paths.lake, table, run_id).to_pylist():
        out.setdefault(row["sample_id"], []).append(row)
    return out


def test_ray_run_equals_single_process_run(
    ray_address: str, demo_cases: Path, tmp_path: Path
) -> None:
    test_set = load_test_set(demo_cases)
    runs = {}
    for executor in ("local", "ray"):
        paths = resolve_paths(tmp_path / executor)
        config = RunConfig(name="demo", test_set=str(demo_cases), executor=executor)
        outcome = run_evaluation(config, paths, test_set=test_set)
        assert (outcome.status, outcome.samples, outcome.errors) == ("completed", 20, 0)
        runs[executor] = (paths, outcome.run_id)
    (one, one_id), (ray, ray_id) = runs["local"], runs["ray"]
    local_rows = {k: v[0] for k, v in by_sample(one, "results", one_id).items()}
    ray_rows = {k: v[0] for k, v in by_sample(ray, "results", ray_id).items()}
    assert sorted(local_rows) == sorted(ray_rows) == sorted(case_ids(demo_cases))
    for sample_id, row in local_rows.items():
        other = ray_rows[sample_id]
        for column in SCORES:
            want, got = row[column], other[column]
            if isinstance(want, float):
                assert got == pytest.approx(want, abs=1e-6), (sample_id, column)
            else:
                assert got == want, (sample_id, column)
    for table in CHILDREN:
        a, b = by_sample(one, table, one_id), by_sample(ray, table, ray_id)
        assert {k: len(v) for k, v in a.items()} == {k: len(v) for k, v in b.items()}, table
    # The run record says how the run went: the executor is kept with the config.
    stored = read_table(ray.lake, "runs", ray_id, 0).to_pylist()[-1]
    assert json.loads(stored["config"])["executor"] == "ray"
    assert stored["status"] == "completed"


def test_killed_worker_loses_only_its_shard(
    ray_address: str, demo_cases: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    run = cli(home, demo_cases, "--ray", ray_address)
    wait_for(lambda: results_parts(home) >= 1 and shard_workers(), 240, "a shard in flight")
    victim = shard_workers()[0]
    victim.send_signal(signal.SIGKILL)
    out, err = run.communicate(timeout=300)
    assert run.returncode == 0, err
    assert "a Ray worker died" in err
    run_id = out.strip().splitlines()[-1]
    assert_exactly_once(home, run_id, case_ids(demo_cases))
    assert statuses(home, run_id)[-1] == "completed"


def test_killed_driver_then_the_same_command_finishes_the_run(
    ray_address: str, demo_cases: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    first = cli(home, demo_cases, "--ray", ray_address)
    wait_for(lambda: results_parts(home) >= 1, 240, "a first published shard")
    first.send_signal(signal.SIGKILL)
    first.communicate(timeout=60)
    # Ray ends the tasks of a dead driver's job; none may write after the resume starts.
    wait_for(lambda: not shard_workers(), 60, "the dead driver's tasks to end")
    run_id = the_run(home)
    done_before = len(read_table(resolve_paths(home).lake, "results", run_id).to_pylist())
    assert 0 < done_before < 20
    again = cli(home, demo_cases, "--ray", ray_address)
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    assert out.strip().splitlines()[-1] == run_id
    assert f"{done_before} samples already in the lake" in err
    assert_exactly_once(home, run_id, case_ids(demo_cases))
    assert statuses(home, run_id)[-1] == "completed"


def test_sigterm_cancels_the_tasks_and_a_resume_finishes(
    ray_address: str, demo_cases: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    first = cli(home, demo_cases, "--ray", ray_address, "--option", "cancel_grace_s=0")
    wait_for(lambda: results_parts(home) >= 1 and shard_workers(), 240, "a shard in flight")
    first.send_signal(signal.SIGTERM)
    _, err = first.communicate(timeout=120)
    assert first.returncode == 130, err
    assert "cancelled" in err and "Ray tasks in flight" in err
    run_id = the_run(home)
    assert statuses(home, run_id)[-1] == "cancelled"
    wait_for(lambda: not shard_workers(), 30, "the cancelled tasks to end")
    again = cli(home, demo_cases, "--ray", ray_address)
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    assert out.strip().splitlines()[-1] == run_id
    assert_exactly_once(home, run_id, case_ids(demo_cases))


def test_without_ray_installed_the_flag_says_how_to_install_it(
    demo_cases: Path, tmp_path: Path
) -> None:
    script = (
        "import sys; sys.modules['ray'] = None; from evalhouse.cli import main; "
        f"sys.exit(main(['--home', {str(tmp_path)!r}, 'run', '--test-set', "
        f"{str(demo_cases)!r}, '--name', 'x', '--ray']))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: --ray: Ray is not installed: pip install 'evalhouse[scale]'"
    ]
    assert not (tmp_path / "lake").exists()


def test_the_default_path_never_imports_ray(demo_cases: Path, tmp_path: Path) -> None:
    script = (
        "import sys; import evalhouse.cli, engine, engine.runner, engine.run.distributed; "
        f"code = evalhouse.cli.main(['--home', {str(tmp_path)!r}, 'run', '--test-set', "
        f"{str(demo_cases)!r}, '--name', 'plain', '--no-ingest', '--only', "
        f"{sorted(case_ids(demo_cases))[0]!r}]); "
        "assert code == 0, code; assert 'ray' not in sys.modules, 'ray was imported'"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
