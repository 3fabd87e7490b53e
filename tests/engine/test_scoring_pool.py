"""The scoring pool: worker processes for the CPU-bound scorers (``engine.run.pool``).

Real processes throughout: a run with two workers scores exactly what one process scores;
a worker killed mid-batch loses and doubles nothing; workers that cannot start leave the
run scoring in its own process; a run killed with -9 leaves no worker behind and resumes
to exactly one row per sample.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import psutil
import pytest

from engine.lake import read_table
from engine.models import RunConfig
from engine.run.pool import ScoringPool, WorkerRecipe, start_pool, usable_cores, worker_count
from engine.runner import run_evaluation
from engine.scorers.batching import BatchWorker, PoolUnavailable
from engine.settings import resolve_paths
from engine.testsets import load_test_set
from tests.engine.test_runner import result_ids, write_cases

ROOT = Path(__file__).resolve().parents[2]
RECIPE = WorkerRecipe(config_json="{}", cache=None, threads=1)
CASES_KILLED = 200


# ----------------------------------------------------------------------------- test workers
# Module-level builders: a worker receives its builder by name, as the real one.


def echo_or_die(recipe: WorkerRecipe) -> dict[str, Callable[[list[Any]], Sequence[Any]]]:
    """Doubles numbers, with the worker's pid; the number 13 kills the worker."""

    def double(items: list[Any]) -> list[Any]:
        if 13 in items:
            os._exit(1)
        return [(item * 2, os.getpid()) for item in items]

    return {"echo": double}


def cannot_build(recipe: WorkerRecipe) -> dict[str, Callable[[list[Any]], Sequence[Any]]]:
    """A worker whose scorers cannot be built (a model file gone, say)."""
    raise RuntimeError("model file not found: /nowhere/model.onnx")


def _submit_all(worker: BatchWorker[int, Any], items: list[int]) -> list[Any]:
    async def go() -> list[Any]:
        try:
            return await asyncio.gather(*(worker.submit(i) for i in items))
        finally:
            await worker.aclose()

    return asyncio.run(go())


# ----------------------------------------------------------------------------- the pool


def test_batches_run_in_every_worker_and_come_back_in_order() -> None:
    pool = ScoringPool(RECIPE, 2, users=1, builder=echo_or_die)
    try:
        pool.warm()
        worker: BatchWorker[int, Any] = BatchWorker(
            lambda items: [i * 2 for i in items], 4, pool=pool, kind="echo", sample_of=str
        )
        got = _submit_all(worker, list(range(20, 60)))
    finally:
        pool.close()
    assert [value for value, _ in got] == [i * 2 for i in range(20, 60)]
    pids = {pid for _, pid in got}
    assert len(pids) == 2 and os.getpid() not in pids


def test_a_killed_worker_loses_and_doubles_nothing() -> None:
    """The batch holding 13 kills its worker: the lane gets a fresh one, the batch is
    retried sample by sample, 13 alone fails, every other sample comes back once."""
    pool = ScoringPool(RECIPE, 2, users=1, builder=echo_or_die)
    try:
        pool.warm()
        worker: BatchWorker[int, Any] = BatchWorker(
            lambda items: [i for i in items], 8, pool=pool, kind="echo", sample_of=str
        )
        got = _submit_all(worker, list(range(30)))
        restarts = pool.restarts
    finally:
        pool.close()
    assert isinstance(got[13], Exception)
    assert [g[0] for i, g in enumerate(got) if i != 13] == [i * 2 for i in range(30) if i != 13]
    assert restarts >= 2  # the batch, then 13 alone


def test_workers_that_cannot_start_say_why() -> None:
    pool = ScoringPool(RECIPE, 2, users=1, builder=cannot_build)
    with pytest.raises(PoolUnavailable, match="model file not found"):
        pool.warm(timeout=120)


def test_a_pool_that_gives_up_leaves_batches_to_a_thread() -> None:
    class Gone:
        workers = 2

        def lane(self, sample: object) -> int:
            return hash(sample) % 2

        async def run(self, kind: str, lane: int, items: list[Any]) -> list[Any]:
            raise PoolUnavailable("scoring workers died 11 times")

    worker: BatchWorker[int, Any] = BatchWorker(
        lambda items: [i + 1 for i in items], 4, pool=Gone(), kind="echo", sample_of=str
    )
    assert _submit_all(worker, [1, 2, 3]) == [2, 3, 4]


def test_a_sample_keeps_its_lane_for_every_scorer() -> None:
    pool = ScoringPool(RECIPE, 3, users=2, builder=echo_or_die)
    try:
        first = [pool.lane(("case", str(i))) for i in range(9)]
        second = [pool.lane(("case", str(i))) for i in range(9)]
    finally:
        pool.close(wait=False)
    assert first == second
    assert sorted(first) == [0, 0, 0, 1, 1, 1, 2, 2, 2]  # round the lanes in turn


# ----------------------------------------------------------------------------- how many


def test_worker_count() -> None:
    config = RunConfig(name="n", test_set="t.jsonl")
    assert worker_count(config, 10) == 1  # a few samples do not repay starting a worker
    assert worker_count(config, 100_000) == usable_cores()
    # --workers is bounded by the samples (one per 64) and the usable cores unless forced
    assert worker_count(config.model_copy(update={"workers": 3}), 10) == 1
    forced = config.model_copy(update={"workers": 3, "force_workers": True})
    assert worker_count(forced, 10) == 3
    assert worker_count(config.model_copy(update={"workers": 2}), 65) == min(2, usable_cores())
    remote = config.model_copy(update={"embedder": "openai:text-embedding-3-small"})
    assert worker_count(remote.model_copy(update={"workers": 4}), 100_000) == 1
    assert worker_count(config.model_copy(update={"workers": 1}), 100_000) == 1


def test_workers_is_pace_not_what_a_run_computes() -> None:
    one = RunConfig(name="n", test_set="t.jsonl", workers=1)
    assert one.computing() == one.model_copy(update={"workers": 4}).computing()


# ----------------------------------------------------------------------------- real runs


def _rows(lake: Path, run_id: str) -> dict[str, list[str]]:
    skip = {"run_id", "scored_at", "scoring_ms", "latency_ms"}
    out: dict[str, list[str]] = {}
    for table in ("results", "claims", "verdicts", "highlights", "attributions"):
        rows = read_table(lake, table, run_id).to_pylist()
        out[table] = sorted(
            json.dumps({k: v for k, v in r.items() if k not in skip}, sort_keys=True, default=str)
            for r in rows
        )
    return out


@pytest.mark.slow
def test_two_workers_score_exactly_what_one_process_scores(tmp_path: Path) -> None:
    from engine.demo import build_weekly_test_sets

    _, week, _ = build_weekly_test_sets(tmp_path / "weeks", weeks=1)[0]
    # 42 cases: all five domains, and 21 a lane, more than one batch of the scorers' 16 in
    # each worker (every eighth of the week; a quarter scored twice as much to check the same).
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(week.read_text(encoding="utf-8").splitlines(True)[::8]))
    test_set = load_test_set(path)
    assert len(test_set.cases) > 2 * 16 and len({c.domain for c in test_set.cases}) == 5
    got = {}
    for workers in (1, 2):
        paths = resolve_paths(tmp_path / f"home{workers}")  # each its own cold cache
        config = RunConfig(
            name="w", test_set=str(path), workers=workers, force_workers=True,
            max_failed_fraction=1,
        )  # fmt: skip
        done = run_evaluation(config, paths, test_set=test_set)
        assert done.status == "completed" and done.errors == 0
        got[workers] = _rows(paths.lake, done.run_id)
    assert got[1]["results"] and got[1]["claims"] and got[1]["verdicts"]
    assert got[1] == got[2]


def test_a_pool_starts_only_for_local_cpu_bound_scoring(tmp_path: Path) -> None:
    paths = resolve_paths(tmp_path / "home")
    config = RunConfig(name="n", test_set="t.jsonl")
    assert start_pool(config, paths, 10) is None
    assert start_pool(config.model_copy(update={"executor": "ray"}), paths, 10**6) is None


def _workers_of(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


@pytest.mark.slow
def test_kill_9_leaves_no_worker_and_the_run_resumes_exactly(tmp_path: Path) -> None:
    # Enough for two workers (one per 64 samples) and for the kill to land after the first
    # flush of 50 with most of the run still to do; more would only lengthen the resume.
    cases = write_cases(tmp_path / "cases.jsonl", CASES_KILLED)
    home = tmp_path / "home"
    command = [
        *(sys.executable, "-m", "evalhouse.cli", "run", "--test-set", str(cases)),
        *("--name", "killed", "--workers", "2", "--home", str(home), "--no-ingest"),
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    paths = resolve_paths(home)
    deadline = time.monotonic() + 120
    children: list[psutil.Process] = []
    while time.monotonic() < deadline and proc.poll() is None:
        children = _workers_of(proc.pid) or children
        published = list((paths.lake / "results").glob("*/*/part-*.parquet"))
        if published and len(children) >= 2:
            break
        time.sleep(0.1)
    assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    _, alive = psutil.wait_procs(children, timeout=30)
    assert not alive, f"workers outlived their run: {[p.pid for p in alive]}"

    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    run_ids = [p.name.removeprefix("run_id=") for p in (paths.lake / "runs").glob("run_id=*")]
    assert len(run_ids) == 1  # resumed, not started again
    ids = result_ids(paths, run_ids[0])
    assert len(ids) == CASES_KILLED and len(set(ids)) == CASES_KILLED
