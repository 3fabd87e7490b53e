"""Which run a command is: a new one, or an unfinished one to resume, and its lock.

A run is resumed when ``--resume RUN_ID`` names it, or when the latest unfinished run with
the same name, test-set hash and computing settings (``RunConfig.computing``, compared as
normalised configs, not raw JSON) has no live process. A live process holds an advisory
lock on ``progress/<run_id>/.lock``; the kernel drops it when the process dies (kill -9
included), which is how a run left "running" by a dead process is told from a live one.
A run of the same name that is alive in another process is never taken over: the command
is refused, or (``start_new_if_live``, what ``evalhouse run`` asks) starts a run of its own.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import os
import secrets
import socket
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

import pyarrow.parquet as pq
from pydantic import ValidationError

from engine.clock import utcnow
from engine.errors import InputError
from engine.lake import list_parts, write_part
from engine.models import RunConfig, RunRecord
from engine.models.config import PACE_FIELDS
from engine.secrets import redact
from engine.settings import Paths

try:  # POSIX advisory locks tell a live run from a dead one.
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

RESUMABLE: frozenset[str] = frozenset({"running", "paused", "interrupted", "cancelled"})
"""Run states a later command may resume."""


class RunError(InputError):
    """The run cannot start or resume (bad resume id, changed test set, run in use).

    The CLI prints the message and exits with code 2.
    """


def new_run_id(now: datetime | None = None) -> str:
    """A run id sortable by start time: ``20261122T071500Z-ab12cd``."""
    now = now or datetime.now(UTC)
    return f"{now.strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(3)}"


@dataclass(frozen=True)
class RunState:
    """The latest state of a run in the lake."""

    run_id: str
    name: str
    status: str
    test_set_hash: str
    started_at: datetime
    updated_at: datetime
    config: str


def latest_run_states(lake: Path) -> dict[str, RunState]:
    """The latest state of every run in the lake (small: a few parts per run)."""
    latest: dict[str, RunState] = {}
    columns = ["run_id", "name", "status", "test_set_hash", "started_at", "updated_at", "config"]
    for part in list_parts(lake, ["runs"]):
        try:
            rows = pq.read_table(part.path, columns=columns).to_pylist()
        except Exception:  # an unreadable part is ingest's to report; skip it here
            continue
        for row in rows:
            state = RunState(**row)
            seen = latest.get(state.run_id)
            if seen is None or state.updated_at >= seen.updated_at:
                latest[state.run_id] = state
    return latest


def stored_config(state: RunState) -> RunConfig | None:
    """The run's config as stored (older layouts migrated); None when unreadable."""
    try:
        return RunConfig.model_validate_json(state.config)
    except ValidationError:
        return None


class RunLock:
    """An exclusive advisory lock held while a process runs a run id."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle: IO[str] | None = None

    @classmethod
    def of(cls, paths: Paths, run_id: str) -> RunLock:
        """The lock of ``run_id`` under ``paths``."""
        return cls(paths.progress / run_id / ".lock")

    def try_acquire(self) -> bool:
        """Take the lock; False when another live process holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held for the run
        if fcntl is not None:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                handle.close()
                return False
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()} {socket.gethostname()}\n")
        handle.flush()
        self._handle = handle
        return True

    def holder(self) -> str:
        """Who holds the lock (pid and host), as its holder wrote it."""
        with contextlib.suppress(OSError):
            return self.path.read_text(encoding="utf-8").strip()
        return "unknown"

    def release(self) -> None:
        """Let the lock go."""
        if self._handle is not None:
            if fcntl is not None:
                with contextlib.suppress(OSError):
                    fcntl.flock(self._handle.fileno(), fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None


@dataclass(frozen=True)
class RunIdentity:
    """The run a command runs, with its lock held."""

    run_id: str
    config: RunConfig
    """The settings it computes with (a resumed run's own, with today's pace)."""
    started_at: datetime
    resumed: bool
    lock: RunLock
    note: str | None = None
    """Something the person should know about the choice (a live run left alone)."""


def _comparable(config: RunConfig) -> str:
    """The computing settings as stored: secrets (a URL's password) are masked in
    ``runs.config``, so both sides are compared masked."""
    return redact(json.dumps(config.computing(), sort_keys=True))


def _with_pace(stored: RunConfig, asked: RunConfig) -> RunConfig:
    """A resumed run computes with its stored settings; how fast it goes and when it
    counts as failed may change."""
    return stored.model_copy(update={name: getattr(asked, name) for name in PACE_FIELDS})


def resume_named(paths: Paths, run_id: str, test_set_hash: str, asked: RunConfig) -> RunIdentity:
    """The run ``--resume RUN_ID`` names, locked. Raises RunError when it cannot be."""
    state = latest_run_states(paths.lake).get(run_id)
    if state is None:
        raise RunError(f"no run {run_id!r} in {paths.lake}")
    if state.test_set_hash != test_set_hash:
        raise RunError(
            f"run {state.run_id} was made from a different test set (sha256 "
            f"{state.test_set_hash[:12]}..., this file {test_set_hash[:12]}...); "
            "start a new run instead"
        )
    stored = stored_config(state)
    if stored is None:
        raise RunError(f"run {state.run_id} has a config this version cannot read")
    lock = RunLock.of(paths, state.run_id)
    if not lock.try_acquire():
        raise RunError(f"run {state.run_id} is running in another process ({lock.holder()})")
    return RunIdentity(state.run_id, _with_pace(stored, asked), state.started_at, True, lock)


def resolve_run(
    paths: Paths,
    config: RunConfig,
    test_set_hash: str,
    *,
    resume_run_id: str | None,
    now: datetime,
    start_new_if_live: bool = False,
) -> RunIdentity:
    """The run to run: the one named, else an unfinished run of the same name, test set and
    computing settings whose process is gone, else a new run. A matching run alive in
    another process raises RunError, or with ``start_new_if_live`` is left alone."""
    if resume_run_id is not None:
        return resume_named(paths, resume_run_id, test_set_hash, config)
    wanted = _comparable(config)
    note: str | None = None
    unfinished = sorted(
        (
            s
            for s in latest_run_states(paths.lake).values()
            if s.name == config.name and s.test_set_hash == test_set_hash and s.status in RESUMABLE
        ),
        key=lambda s: s.run_id,
        reverse=True,
    )
    for state in unfinished:
        stored = stored_config(state)
        if stored is None or _comparable(stored) != wanted:
            continue  # same name, different settings: a new run, not a resume
        lock = RunLock.of(paths, state.run_id)
        if lock.try_acquire():
            # The states were read before the lock: the run may have finished and let go
            # of its lock since. Resume it only if it is still resumable now.
            current = latest_run_states(paths.lake).get(state.run_id)
            if current is not None and current.status in RESUMABLE:
                return RunIdentity(state.run_id, config, state.started_at, True, lock)
            lock.release()
            break
        if not start_new_if_live:
            raise RunError(
                f"run {state.run_id} ({state.name!r}) on this test set is still running "
                f"in another process ({lock.holder()}); wait for it or use another --name"
            )
        note = (
            f"run {state.run_id} ({state.name!r}) is running in another process "
            f"({lock.holder()}); starting a new run"
        )
        break  # alive in another process: leave it alone and start a run of our own
    while True:
        run_id = new_run_id(now.replace(tzinfo=UTC))
        lock = RunLock.of(paths, run_id)
        if lock.try_acquire():
            return RunIdentity(run_id, config, now, False, lock, note)


def mark_abandoned_runs(paths: Paths, now: datetime | None = None) -> list[str]:
    """Record as ``interrupted`` every run of this host whose latest state is ``running``
    but whose process is gone (nobody holds its lock: killed, or its machine rebooted), so
    pages and ``run_summary`` stop showing it as in progress; it stays resumable. Runs of
    other hosts are left alone: their locks are not on this machine. Returns their ids.

    Ingest calls this after every flush of a run, so only four small columns of each runs
    part are read; a whole state is read only for a run that is marked."""
    host = socket.gethostname()
    latest: dict[str, tuple[datetime, str, str | None, Path]] = {}
    for part in list_parts(paths.lake, ["runs"]):
        try:
            rows = pq.read_table(part.path, columns=_STATE_COLUMNS).to_pylist()
        except Exception:  # an unreadable part is ingest's to report
            continue
        for row in rows:
            run_id = str(row["run_id"])
            seen = latest.get(run_id)
            if seen is None or row["updated_at"] >= seen[0]:
                latest[run_id] = (row["updated_at"], row["status"], row["host"], part.path)
    marked: list[str] = []
    for run_id, (updated, status, run_host, path) in latest.items():
        if status not in ("running", "paused") or run_host != host:
            continue
        lock = RunLock.of(paths, run_id)
        if not lock.path.exists() or not lock.try_acquire():
            continue  # never ran here, or alive
        try:
            state = next(
                r
                for r in pq.read_table(path).to_pylist()
                if r["run_id"] == run_id and r["updated_at"] == updated
            )
            record = RunRecord.model_validate(
                {**state, "status": "interrupted", "updated_at": now or utcnow()}
            )
            write_part(paths.lake, "runs", run_id, 0, [record])
            marked.append(run_id)
        finally:
            lock.release()
    return marked


_STATE_COLUMNS = ["run_id", "status", "host", "updated_at"]


def evalhouse_version() -> str:
    """The installed evalhouse's version (recorded with every run, and compared between a
    Ray driver and its workers)."""
    try:
        return importlib.metadata.version("evalhouse")
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"


def git_commit() -> str | None:
    """The commit of the working directory's git checkout (recorded with every run), or
    None outside one."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    sha = done.stdout.strip()
    return sha if done.returncode == 0 and len(sha) == 40 else None
