"""``monitor`` under attack: a malformed trace in the watched folder skips that trace and
the pass still scores the rest; a crash is exit 70, never the 1 that means "an alert is
firing"; ``--every`` survives a held lock and a failed pass, says so in one line and goes
on; ``--max-cost nan`` and an ``--every`` beyond any clock are refused in one line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from engine import runner
from engine.monitor import monitor_dir, pass_lock
from evalhouse.commands import monitor as monitor_command
from tests.cli.test_monitor import SERIES, results_per_trace, write_traces
from tests.hostile.conftest import Outcome, assert_refused, cli


class Schedule:
    """Stands in for the sleep between passes: runs ``between`` after each pass and stops
    the schedule (as Ctrl-C does) after ``passes`` passes."""

    def __init__(self, passes: int, between: list[object]) -> None:
        self.left = passes
        self.between = list(between)

    def sleep(self, _seconds: float) -> None:
        self.left -= 1
        if self.between:
            step = self.between.pop(0)
            if callable(step):
                step()
        if self.left <= 0:
            raise KeyboardInterrupt


def _monitor(capsys: pytest.CaptureFixture[str], tmp_path: Path, *extra: str) -> Outcome:
    home, folder = tmp_path / "home", tmp_path / "traces"
    return cli(capsys, "monitor", str(folder), "--series", SERIES, "--home", str(home), *extra)


def test_a_malformed_trace_in_the_folder_skips_only_itself(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "traces"
    write_traces(folder, "good.json", 0, 2)
    bad = json.loads((folder / "good.json").read_text())
    span = bad["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    span["traceId"] = "bad-trace"
    span["attributes"].append(
        {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "9" * 5000}}
    )
    (folder / "bad.json").write_text(json.dumps(bad))
    outcome = _monitor(capsys, tmp_path)
    assert outcome.code == 0 and "Traceback" not in outcome.err, outcome.err
    assert "trace bad-trace: intValue" in outcome.err
    assert set(results_per_trace(tmp_path / "home")) == {f"{i:032x}" for i in range(2)}


@pytest.fixture
def crashing_runs(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Every run fails as a thread start refused under a memory cap does; yields the
    count of runs tried."""
    tried: list[int] = []

    def refuse(*_args: object, **_kwargs: object) -> object:
        tried.append(1)
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(runner, "run_evaluation", refuse)
    yield tried


def test_a_crashed_pass_is_exit_70_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], crashing_runs: list[int]
) -> None:
    write_traces(tmp_path / "traces", "t.json", 0, 1)
    outcome = _monitor(capsys, tmp_path)
    assert outcome.code == 70 and "Traceback" not in outcome.err, outcome.err
    line = outcome.err_lines[-1]
    assert line.startswith("pass crashed: RuntimeError: can't start new thread"), outcome.err
    assert "unreadable" not in outcome.err and crashing_runs == [1]


def test_every_survives_a_held_lock_and_a_failed_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_traces(tmp_path / "traces", "t.json", 0, 2)
    lock = pass_lock(monitor_dir(tmp_path / "home", SERIES))
    lock.__enter__()  # another pass of the series holds the lock
    real_run = runner.run_evaluation
    calls: list[int] = []

    def fail_once(*args: object, **kwargs: object) -> object:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("can't start new thread")
        return real_run(*args, **kwargs)

    monkeypatch.setattr(runner, "run_evaluation", fail_once)
    schedule = Schedule(passes=3, between=[lambda: lock.__exit__(None, None, None)])
    # The command's own clock only: the run inside a pass sleeps on the real one.
    monkeypatch.setattr(monitor_command, "time", SimpleNamespace(sleep=schedule.sleep))
    outcome = _monitor(capsys, tmp_path, "--every", "10s")
    err = outcome.err
    assert outcome.code == 130 and "Traceback" not in err, err
    assert "pass failed: a monitor pass of this series is running" in err
    assert "pass crashed: RuntimeError: can't start new thread" in err
    assert set(results_per_trace(tmp_path / "home").values()) == {1}, err  # third pass scored
    assert len(results_per_trace(tmp_path / "home")) == 2


@pytest.mark.parametrize(
    ("flags", "mentions"),
    [
        (["--max-cost", "nan"], "--max-cost: 'nan' must be a finite amount of 0 or more"),
        (["--max-cost", "inf"], "--max-cost: 'inf' must be a finite amount"),
        (["--every", "99999999999999999999d"], "--every: '99999999999999999999d': at most 3650d"),
        (["--every", "1e999s"], "--every: '1e999s' must be a duration of 0 or more"),
    ],
)
def test_unbounded_numbers_are_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], mentions: str
) -> None:
    write_traces(tmp_path / "traces", "t.json", 0, 1)
    assert_refused(_monitor(capsys, tmp_path, *flags), mentions=mentions)
    assert not (tmp_path / "home" / "lake").exists()
