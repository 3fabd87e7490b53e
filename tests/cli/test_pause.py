"""``evalhouse pause`` / ``continue``: a real run held mid-way and let go, nothing lost or
doubled, its state ``paused`` in between (never failed)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.run.identity import latest_run_states
from engine.settings import resolve_paths
from evalhouse.cli import main
from tests.engine.test_runner import result_ids, write_cases

ROOT = Path(__file__).resolve().parents[2]


def _wait(condition: Callable[[], bool], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.1)


@pytest.mark.slow
def test_a_paused_run_holds_then_finishes_exactly(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 300)
    home = tmp_path / "home"
    paths = resolve_paths(home)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "evalhouse.cli", "run", "--test-set", str(cases)]
    proc = subprocess.Popen(
        [*command, "--name", "held", "--home", str(home), "--no-ingest", "--workers", "1"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait(lambda: any(s.status == "running" for s in latest_run_states(paths.lake).values()))
        run_id = next(iter(latest_run_states(paths.lake)))
        _wait(lambda: len(result_ids(paths, run_id)) > 0)
        assert main(["pause", run_id, "--home", str(home)]) == 0
        _wait(lambda: latest_run_states(paths.lake)[run_id].status == "paused", timeout=30)
        time.sleep(2)  # what was in flight is published by now
        held = len(result_ids(paths, run_id))
        time.sleep(2)
        assert len(result_ids(paths, run_id)) == held < 300  # nothing new started
        assert proc.poll() is None
        assert main(["continue", run_id, "--home", str(home)]) == 0
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "paused: samples in flight finish" in err and "continuing" in err
    ids = result_ids(paths, run_id)
    assert len(ids) == 300 and len(set(ids)) == 300
    assert latest_run_states(paths.lake)[run_id].status == "completed"
    assert not (home / "control" / f"{run_id}.pause").exists()


def test_only_a_running_run_pauses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "home"
    assert main(["pause", "20260101T000000Z-abcdef", "--home", str(home)]) == 2
    assert "no run '20260101T000000Z-abcdef'" in capsys.readouterr().err
    cases = write_cases(tmp_path / "cases.jsonl", 2)
    assert main(["run", "--test-set", str(cases), "--name", "n", "--home", str(home)]) == 0
    run_id = next(iter(latest_run_states(resolve_paths(home).lake)))
    capsys.readouterr()
    assert main(["pause", run_id, "--home", str(home)]) == 2
    assert f"run {run_id} is completed: only a running run pauses" in capsys.readouterr().err
