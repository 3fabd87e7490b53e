"""Run control on the Runs page and in the sidebar: live runs of the home (however started)
with progress, pause, continue and cancel; Resume only for a run that still lacks samples.

Runs are real: their states are lake parts, their locks are held by a real process, and
their pause is the control file the run loop polls."""

from __future__ import annotations

import dataclasses
import json
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboard import launcher
from dashboard.components.run_control import REFRESH_S, refresh_every
from dashboard.live_runs import file_progress, lacks_samples, live_runs
from engine.lake import write_part
from engine.progress import ProgressEntry, progress_file_path, write_progress_file
from engine.run import control
from engine.settings import Paths, resolve_paths
from tests.dashboard.conftest import AppFactory
from tests.factories import run_record

_HOLD = (
    "import sys, time\n"
    "from engine.run.identity import RunLock\n"
    "from engine.settings import resolve_paths\n"
    "lock = RunLock.of(resolve_paths(sys.argv[1]), sys.argv[2])\n"
    "assert lock.try_acquire()\n"
    "print('held', flush=True)\n"
    "time.sleep(300)\n"
)


def _state(paths: Paths, run_id: str, status: str, name: str) -> None:
    finished = None if status in ("running", "paused") else run_record(run_id).started_at
    record = run_record(run_id, name=name, status=status, finished_at=finished)
    write_part(paths.lake, "runs", run_id, 0, [record])


@pytest.fixture
def home(fixture_home: Paths, tmp_path: Path) -> Paths:
    shutil.copytree(fixture_home.home, tmp_path / "home")
    return resolve_paths(tmp_path / "home")


def _hold(home: Paths, run_id: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(home.home), run_id], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def _write_progress(home: Paths, run_id: str, done: int, total: int) -> None:
    entries = [
        ProgressEntry(f"h{i}", f"q{i}", "?", run_record(run_id).started_at, {}) for i in range(done)
    ]
    write_progress_file(
        progress_file_path(home.progress, run_id, 1),
        test_set_name="t",
        iteration=1,
        total=total,
        entries=entries,
    )


def test_the_runs_page_lists_and_controls_live_runs(app: AppFactory, home: Paths) -> None:
    """A running and a paused command-line run are listed at the top with their progress;
    a dead "running" run and a completed one are not. Pause, Continue and Cancel from the
    page act on the real control file and process."""
    running = _hold(home, "20261129T070000Z-aaaaaa")
    paused = _hold(home, "20261129T070100Z-bbbbbb")
    try:
        _state(home, "20261129T070000Z-aaaaaa", "running", "nightly big")
        _state(home, "20261129T070100Z-bbbbbb", "paused", "weekly small")
        _state(home, "20261129T065900Z-deaddd", "running", "crashed long ago")
        (home.progress / "20261129T065900Z-deaddd").mkdir(parents=True)
        (home.progress / "20261129T065900Z-deaddd" / ".lock").write_text(
            f"999999999 {socket.gethostname()}\n"  # its process is gone
        )
        _write_progress(home, "20261129T070000Z-aaaaaa", 3, 12)
        control.request_pause(home, "20261129T070100Z-bbbbbb")

        listed = live_runs(home)
        assert [(r.name, r.status, r.progress) for r in listed] == [
            ("weekly small", "paused", None),
            ("nightly big", "running", (3, 12)),
        ]
        at = app(home, page="runs")
        shown = [m.value for m in at.markdown]
        assert any("nightly big — running" in m for m in shown)
        assert any("weekly small — paused" in m for m in shown)
        assert not any("crashed long ago" in m for m in shown)
        assert "3/12 samples" in [p.proto.text for p in at.get("progress")]

        at.button(key="runs_live_20261129T070000Z-aaaaaa_pause").click().run()
        assert control.pause_requested(home, "20261129T070000Z-aaaaaa")
        at.button(key="runs_live_20261129T070100Z-bbbbbb_continue").click().run()
        assert not control.pause_requested(home, "20261129T070100Z-bbbbbb")

        at.button(key="runs_live_20261129T070100Z-bbbbbb_cancel").click().run()
        assert paused.wait(timeout=10) == -15  # SIGTERM: the run saves what it scored and ends
        assert running.poll() is None  # the other run goes on
    finally:
        for proc in (running, paused):
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def _viewer_page() -> None:
    from dashboard.components.run_control import live_runs_section

    live_runs_section(False)  # a user the operator does not let launch


def test_a_user_who_may_not_launch_sees_runs_but_no_controls(
    home: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    proc = _hold(home, "20261129T070000Z-aaaaaa")
    try:
        _state(home, "20261129T070000Z-aaaaaa", "running", "nightly big")
        monkeypatch.setenv("EVALHOUSE_HOME", str(home.home))
        at = AppTest.from_function(_viewer_page)
        at.run()
        assert any("nightly big — running" in m.value for m in at.markdown)
        assert not at.button
    finally:
        proc.kill()
        proc.wait()


def test_no_live_run_says_so(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home, page="runs")
    assert "No run is going on in this home." in [c.value for c in at.caption]


def _cancelled_launch(home: Paths, run_id: str) -> None:
    """A launch the dashboard recorded as cancelled: exit 130 and its cancel mark."""
    folder = home.home / "launches"
    folder.mkdir(parents=True, exist_ok=True)
    spec = {"test_set": "/t/s.jsonl", "name": "stopped early"}
    record = {"launch_id": "L1", "spec": spec, "command": ["evalhouse"], "pid": 0,
              "started_at": 0.0, "folder": str(folder), "extra": {}}  # fmt: skip
    (folder / "L1.json").write_text(json.dumps(record), "utf-8")
    (folder / "L1.out").write_text(f"{run_id}\n", "utf-8")
    (folder / "L1.rc").write_text("130", "utf-8")
    (folder / "L1.cancel").write_text("0", "utf-8")


@pytest.mark.parametrize(("latest", "offered"), [("cancelled", True), ("completed", False)])
def test_resume_only_while_the_run_lacks_samples(
    app: AppFactory, home: Paths, latest: str, offered: bool
) -> None:
    """A cancelled launch whose run was since resumed to completion offers no Resume."""
    run_id = "20261129T060000Z-cccccc"
    _state(home, run_id, "cancelled", "stopped early")
    if latest == "completed":
        write_part(
            home.lake,
            "runs",
            run_id,
            0,
            [
                run_record(
                    run_id,
                    name="stopped early",
                    updated_at=run_record(run_id).started_at.replace(hour=10),
                )
            ],
        )
    _cancelled_launch(home, run_id)
    assert lacks_samples(home, run_id) is offered
    at = app(home)
    resume = [b for b in at.sidebar.button if b.key == "launch_resume_L1"]
    assert bool(resume) is offered
    captions = [c.value for c in at.sidebar.caption]
    assert ("Resumed since and finished: nothing left to score." in captions) is not offered
    (title,) = [e.label for e in at.sidebar.expander if e.label.startswith("stopped early")]
    expected = "cancelled (resumable)" if offered else "cancelled, finished since"
    assert title == f"stopped early — {expected} — {run_id}"


def test_progress_files_count_every_iteration(home: Paths) -> None:
    run_id = "20261129T080000Z-dddddd"
    assert file_progress(home, run_id, 2) is None
    _write_progress(home, run_id, 4, 10)
    assert file_progress(home, run_id, 2) == (4, 20)


def test_the_sidebar_redraws_itself_only_while_a_launch_is_live(home: Paths) -> None:
    """Every open page's sidebar lists the launches: polling them while none can change
    would cost the server a script run every two seconds per open page, for nothing."""
    _cancelled_launch(home, "20261129T060000Z-eeeeee")
    (ended,) = launcher.list_launches(home)
    assert ended.status() == "cancelled (resumable)"
    assert refresh_every([ended]) is None
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        live = dataclasses.replace(ended, launch_id="L2", pid=child.pid)  # no exit code yet
        assert live.status() == "running"
        assert refresh_every([ended, live]) == REFRESH_S
    finally:
        child.kill()
        child.wait()
    assert refresh_every([ended, live]) is None  # it ended: the sidebar stops redrawing
