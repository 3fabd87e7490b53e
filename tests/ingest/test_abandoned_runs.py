"""A run left ``running`` by a process that is gone is recorded as interrupted by the next
ingest (and stays resumable); a live run, and a run of another host, are left alone."""

from __future__ import annotations

import socket
from datetime import datetime

from engine.lake import write_part
from engine.run.identity import RunLock
from engine.settings import Paths
from ingest import ingest
from tests.factories import run_record
from warehouse.db import read_connection


def _running(paths: Paths, run_id: str, host: str) -> None:
    record = run_record(run_id, finished_at=None, status="running", host=host)
    write_part(paths.lake, "runs", run_id, 0, [record])
    lock = RunLock.of(paths, run_id)
    lock.path.parent.mkdir(parents=True, exist_ok=True)
    lock.path.write_text("4242 somewhere\n", encoding="utf-8")  # its process is gone


def _statuses(paths: Paths) -> dict[str, str]:
    with read_connection(paths.warehouse) as con:
        rows = con.execute("SELECT run_id, status FROM run_summary").fetchall()
    return {str(r): str(s) for r, s in rows}


def test_a_dead_running_run_becomes_interrupted(home: Paths) -> None:
    here = socket.gethostname()
    _running(home, "dead", here)
    _running(home, "elsewhere", "another-host")
    _running(home, "alive", here)
    live = RunLock.of(home, "alive")
    assert live.try_acquire()
    try:
        report = ingest(home)
    finally:
        live.release()
    assert report.interrupted == ["dead"]
    assert "run dead was left running" in report.summary()
    assert _statuses(home) == {"dead": "interrupted", "elsewhere": "running", "alive": "running"}
    # "alive" let its lock go meanwhile, so it is gone too; "dead" is not recorded twice
    assert ingest(home).interrupted == ["alive"]


def test_the_interrupted_state_is_newer_than_the_running_one(home: Paths) -> None:
    _running(home, "dead", socket.gethostname())
    ingest(home)
    with read_connection(home.warehouse) as con:
        updated = con.execute("SELECT updated_at FROM runs WHERE run_id = 'dead'").fetchone()
    assert updated is not None and isinstance(updated[0], datetime)
    assert updated[0] > datetime(2026, 11, 1, 9, 0)  # the running state of the factory
