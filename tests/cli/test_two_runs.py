"""Two real ``evalhouse run`` processes in one home at once.

Each pair must finish with exit 0 and exact counts in the lake and the warehouse, whether
the two runs have different names or the same name (then the second starts a new run
id instead of refusing while the first one's lock is held). Ten times in a row, because
the faults this guards against (one writer sweeping another's temporary part, a shared
temporary progress name) struck in about one try in three.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.compute as pc
import pytest

from engine.lake import list_parts, read_table
from engine.settings import Paths, resolve_paths
from ingest import ingest
from warehouse.queries import Warehouse

ROOT = Path(__file__).resolve().parents[2]
# Every run publishes one part per table and iteration (the writer flushes every 50
# samples), the same writes and ingests for 4 cases as for 12: fewer cases only spend
# less of each process's time on the model, not on what the two runs race for.
CASES = 4
CLAIMS_PER_CASE = 2
ITERATIONS = 2
REPEATS = 5  # each trial starts four runs; five keep the suite inside its time budget

# Ten pairs of real processes take a few minutes on a busy 2-core machine.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]


def _write_cases(path: Path) -> Path:
    """A native JSONL test set (DESIGN.md format) whose every response scores without error."""
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(CASES):
            price = 10 + i
            case = {
                "id": f"t{i:02d}",
                "domain": "shop.example",
                "ai_provider": "gpt-x",
                "query": f"What does plan {i} cost?",
                "response": f"Plan {i} costs {price} dollars per month and includes email support.",
                "expected_answer": {
                    "text": f"Plan {i} costs {price} dollars per month.",
                    "claims": [
                        {"id": "c1", "text": f"Plan {i} costs {price} dollars per month."},
                        {"id": "c2", "text": "Email support is included."},
                    ],
                },
                "ground_truth": [
                    {
                        "chunk_id": f"p{i}#0",
                        "page_url": "https://shop.example/pricing",
                        "text": f"Plan {i} is {price} dollars a month with email support.",
                    }
                ],
            }
            handle.write(json.dumps(case) + "\n")
    return path


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "EVALHOUSE_HOME"}
    env["PYTHONPATH"] = str(ROOT)
    return env


def _start(home: Path, test_set: Path, name: str) -> subprocess.Popen[str]:
    command = [
        sys.executable, "-m", "evalhouse.cli", "run", "--home", str(home),
        "--test-set", str(test_set), "--name", name, "--iterations", str(ITERATIONS),
        "--judge", "local", "--embedder", "local",
    ]  # fmt: skip
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """The run id (last stdout line) and stderr of a run that must have exited 0."""
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err
    assert "Traceback" not in err, err
    return out.strip().splitlines()[-1], err


def _wait_for_state(home: Paths, before: set[str]) -> None:
    """Until a runs part of a run id not in ``before`` is published (the run is live)."""
    deadline = time.monotonic() + 60
    while {p.run_id for p in list_parts(home.lake, ["runs"])} <= before:
        assert time.monotonic() < deadline, "the first run never wrote its state"
        time.sleep(0.01)


def _check_lake(home: Paths, run_id: str) -> None:
    results = read_table(home.lake, "results", run_id)
    keys = set(
        zip(
            results.column("iteration").to_pylist(),
            results.column("sample_id").to_pylist(),
            strict=True,
        )
    )
    assert results.num_rows == len(keys) == CASES * ITERATIONS
    assert pc.sum(pc.is_null(results.column("error"))).as_py() == CASES * ITERATIONS
    assert read_table(home.lake, "claims", run_id).num_rows == CASES * CLAIMS_PER_CASE * ITERATIONS


def _check_home(home: Paths, run_ids: list[str]) -> None:
    """Distinct run ids, exact lake and warehouse counts, no temporary file left."""
    assert len(set(run_ids)) == len(run_ids), run_ids
    for run_id in run_ids:
        _check_lake(home, run_id)
    assert not list(home.lake.rglob(".part-*.tmp"))
    assert not list(home.progress.rglob("*.tmp"))
    # The runs ingest after every flush; an ingest postponed by the other run's lock is
    # caught up here, as a user would.
    ingest(home)
    frame = (
        Warehouse(home.warehouse)
        .sql(
            "SELECT r.run_id, r.status, "
            "(SELECT count(*) FROM results s WHERE s.run_id = r.run_id) AS results, "
            "(SELECT count(*) FROM claims c WHERE c.run_id = r.run_id) AS claims "
            "FROM runs r ORDER BY r.run_id"
        )
        .frame
    )
    expected = [
        (r, "completed", CASES * ITERATIONS, CASES * CLAIMS_PER_CASE * ITERATIONS)
        for r in sorted(run_ids)
    ]
    assert frame.rows() == expected


def test_two_runs_in_one_home_again_and_again(tmp_path: Path) -> None:
    test_set = _write_cases(tmp_path / "cases.jsonl")
    took_new_id = 0
    for trial in range(REPEATS):
        # Different names, started at the same moment.
        home = resolve_paths(tmp_path / f"names{trial}")
        first, second = _start(home.home, test_set, "alpha"), _start(home.home, test_set, "beta")
        (a, _), (b, _) = _finish(first), _finish(second)
        _check_home(home, [a, b])
        # The same name: the second starts while the first is live and holds its lock. The
        # first is paused (SIGSTOP: alive, lock held) until the second has published its own
        # run, so the first cannot finish before the second looks, however fast scoring is.
        home = resolve_paths(tmp_path / f"same{trial}")
        third = _start(home.home, test_set, "same")
        _wait_for_state(home, set())
        live = {p.run_id for p in list_parts(home.lake, ["runs"])}
        third.send_signal(signal.SIGSTOP)
        try:
            fourth = _start(home.home, test_set, "same")
            _wait_for_state(home, live)
        finally:
            third.send_signal(signal.SIGCONT)
        (c, _), (d, err) = _finish(third), _finish(fourth)
        took_new_id += "is running in another process" in err
        _check_home(home, [c, d])
    # Every time, the second same-name run found the first one live and so started its own
    # run id: the branch that tells a live run from a dead one is exercised, not bypassed.
    assert took_new_id == REPEATS
