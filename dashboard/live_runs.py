"""Runs going on in this home right now, however they were started, and what may be done
to them. No Streamlit here.

A run announces itself in the lake (its ``runs`` state reads ``running`` or ``paused``) and
holds the lock ``progress/<run_id>/.lock`` whose file names its process and host
(``engine.run.identity``). A state left ``running`` by a process that died is not live:
on this host its process is probed. A run of another host that shares the home is taken
at its word (its process cannot be probed from here). Progress comes from the launch's log
when the dashboard launched it, else from the run's ``.progress.json`` files. Pausing is
the control file every run polls (``engine.run.control``); cancelling is SIGTERM, which
the run catches to save what it scored and end ``cancelled``, resumable.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from dashboard.launcher import Launch, list_launches
from engine.lake import PART_RE, list_parts
from engine.progress import progress_file_path
from engine.run import control
from engine.run.identity import RESUMABLE, RunLock, RunState, stored_config
from engine.settings import Paths

LIVE_STATES = ("running", "paused")
"""Run states that mean a process is (or was last seen) scoring the run."""

LAUNCHES_SCANNED = 20
"""Recent launches matched to live runs (a launch older than these is shown as a CLI run)."""

_STATISTICS_BYTES = 1024
"""A ``.progress.json`` opens with its statistics: this much of it holds them."""
_COMPLETED = re.compile(r'"completedQuestions":\s*(\d+)')
_TOTAL = re.compile(r'"totalQuestions":\s*(\d+)')


_STATE_COLUMNS = [
    "run_id", "name", "status", "test_set_hash", "started_at", "updated_at", "config",
]  # fmt: skip
_PART_STATES: dict[str, tuple[RunState, ...]] = {}
"""The states of every runs part read so far, by path: a published part never changes, so
the lists redrawn every few seconds read only the parts written since."""
_PART_STATES_LOCK = threading.Lock()


def _part_states(path: Path) -> tuple[RunState, ...]:
    key = str(path)
    with _PART_STATES_LOCK:
        known = _PART_STATES.get(key)
    if known is not None:
        return known
    try:
        rows = pq.read_table(path, columns=_STATE_COLUMNS).to_pylist()
        states = tuple(RunState(**row) for row in rows)
    except Exception:  # an unreadable part is ingest's to report; read again next time
        return ()
    with _PART_STATES_LOCK:
        _PART_STATES[key] = states
    return states


def _latest(parts: Iterable[Path]) -> dict[str, RunState]:
    latest: dict[str, RunState] = {}
    for path in parts:
        for state in _part_states(path):
            seen = latest.get(state.run_id)
            if seen is None or state.updated_at >= seen.updated_at:
                latest[state.run_id] = state
    return latest


def run_states(paths: Paths) -> dict[str, RunState]:
    """The latest state of every run of the home (``engine.run.identity.latest_run_states``,
    each part read once per dashboard process)."""
    return _latest(part.path for part in list_parts(paths.lake, ["runs"]))


def run_state(paths: Paths, run_id: str) -> RunState | None:
    """The latest state of one run, reading only its own folder of the lake."""
    folder = paths.lake / "runs" / f"run_id={run_id}"
    parts = (
        [p for it in folder.iterdir() if it.is_dir() for p in it.iterdir() if PART_RE.match(p.name)]
        if folder.is_dir()
        else []
    )
    return _latest(parts).get(run_id)


@dataclass(frozen=True)
class LiveRun:
    """A run going on in this home."""

    run_id: str
    name: str
    status: str
    """``running``, ``paused`` (asked to pause: what is in flight finishes) or ``cancelling``."""
    progress: tuple[int, int] | None
    """Samples done and to do, every iteration together; None before the first figure."""
    pid: int | None
    """The run's process on this host (None when it runs on another host)."""
    host: str
    """The host running it, as its lock names it."""
    launch: Launch | None = None
    """The dashboard's launch of this run, when it was launched from the dashboard."""

    @property
    def started_from(self) -> str:
        """Where the run was started from, as a person reads it."""
        return "dashboard" if self.launch is not None else "command line"


def _holder(paths: Paths, run_id: str) -> tuple[int | None, str] | None:
    """The process and host the run's lock names; None when it has no lock here."""
    lock = RunLock.of(paths, run_id)
    if not lock.path.exists():
        return None
    pid, _, host = lock.holder().partition(" ")
    return (int(pid) if pid.isdigit() else None), host


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True


def file_progress(paths: Paths, run_id: str, iterations: int) -> tuple[int, int] | None:
    """Samples done and to do from the run's ``.progress.json`` files (only their opening
    statistics are read: the files list every finished sample); None before any exists."""
    done = total = 0
    seen = False
    for iteration in range(1, max(1, iterations) + 1):
        path = progress_file_path(paths.progress, run_id, iteration)
        try:
            with path.open("rb") as handle:
                head = handle.read(_STATISTICS_BYTES).decode("utf-8", errors="replace")
        except FileNotFoundError:
            continue
        got_done, got_total = _COMPLETED.search(head), _TOTAL.search(head)
        if got_done is None or got_total is None:
            continue
        seen = True
        done += int(got_done.group(1))
        total = max(total, int(got_total.group(1)))
    if not seen or total == 0:
        return None
    return done, total * max(1, iterations)


def _launches_by_run(paths: Paths) -> dict[str, Launch]:
    """The recent launches whose run id is known, by run id (the newest launch wins)."""
    out: dict[str, Launch] = {}
    for item in list_launches(paths, limit=LAUNCHES_SCANNED):
        run_id = item.live_run_id()
        if run_id is not None and run_id not in out:
            out[run_id] = item
    return out


def _iterations(state: RunState) -> int:
    config = stored_config(state)
    return 1 if config is None else config.iterations


def live_runs(paths: Paths) -> list[LiveRun]:
    """Every run of the home whose latest state is running or paused and whose process is
    still there (on another host: as its state says), newest first."""
    here = socket.gethostname()
    launches: dict[str, Launch] | None = None
    out: list[LiveRun] = []
    for state in sorted(run_states(paths).values(), key=lambda s: s.run_id):
        if state.status not in LIVE_STATES:
            continue
        holder = _holder(paths, state.run_id)
        pid, host = holder if holder is not None else (None, "")
        if host == here and (pid is None or not _alive(pid)):
            continue  # its process died: ingest records it interrupted
        if launches is None:
            launches = _launches_by_run(paths)
        launch = launches.get(state.run_id)
        progress = launch.progress() if launch is not None else None
        if progress is None:
            progress = file_progress(paths, state.run_id, _iterations(state))
        if launch is not None and launch.cancel_path.exists():
            status = "cancelling"
        elif control.pause_requested(paths, state.run_id):
            status = "paused"
        else:
            status = "running"
        out.append(
            LiveRun(
                run_id=state.run_id,
                name=state.name,
                status=status,
                progress=progress,
                pid=pid if host == here else None,
                host=host,
                launch=launch,
            )
        )
    return out[::-1]


def cancel(run: LiveRun, *, grace_s: float = 15.0) -> str:
    """Stop ``run`` cleanly: a dashboard launch through its launcher (which waits for the
    run to save and end), a command-line run by SIGTERM to its process (it saves what it
    scored and ends ``cancelled``). Returns what the person is told."""
    if run.launch is not None:
        return run.launch.cancel(grace_s=grace_s)
    if run.pid is None:
        return f"runs on {run.host or 'another host'}: cancel it there"
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(run.pid, signal.SIGTERM)
    return "cancelling"


def lacks_samples(paths: Paths, run_id: str) -> bool:
    """Whether the run stopped short of its samples and nothing is scoring it now: its
    latest state is resumable and not live. A launch that was cancelled and has since been
    resumed to completion (from the dashboard or the command line) is not."""
    state = run_state(paths, run_id)
    if state is None or state.status not in RESUMABLE:
        return False
    if state.status in LIVE_STATES:
        holder = _holder(paths, run_id)
        if holder is not None and holder[0] is not None and _alive(holder[0]):
            return False  # going again right now
    return True
