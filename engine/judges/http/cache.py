"""A disk cache of judge responses: the same prompt to the same model is paid for once.

Keyed by provider, model, prompt version, sha256 of the prompt, temperature and the ask
index (``engine.judges.asks``: a repeat of a judge call is a fresh call). Only
successful, parsed responses are stored (never an error); API keys are not part of the key
or the value. Entries live in ``judge.sqlite3`` under the cache folder (``engine.cache_db``
says why sqlite), so concurrent runs share them.

Entries are written by one background thread, each turn storing every entry waiting in
one transaction: ``put`` is called on the event loop once per judge call, where a write
would hold up every call in flight. An entry not yet on disk is already served by ``get``
(of any cache of the process); ``flush`` (called when a judge closes, and at exit) waits
until every entry is written. A killed process loses only entries not yet written.

Caches of earlier versions kept one JSON file per entry (``KEY[:2]/KEY.json``): the first
open of such a folder moves those entries into the database and deletes the files.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import logging
import queue
import re
import sqlite3
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from engine.cache_db import open_cache_db, write_rows

log = logging.getLogger("engine.judges.http.cache")

DB_NAME = "judge.sqlite3"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS judge_responses (
    key TEXT NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID
"""
_INSERT = "INSERT OR REPLACE INTO judge_responses VALUES (?, ?)"
_KEY = re.compile(r"[0-9a-f]{64}")
_WRITE_BATCH = 1000
"""Most entries stored in one transaction."""
_OPEN_DATABASES = 8
"""Cache folders whose database a process keeps open."""


def cache_key(
    provider: str,
    model: str,
    prompt_version: str,
    prompt: str,
    temperature: float,
    ask: int = 0,
) -> str:
    """The cache key (hex sha256) of one judge request; ``ask`` is its repeat index."""
    prompt_hash = hashlib.sha256(prompt.encode("utf-8")).hexdigest()
    fields: dict[str, object] = {
        "provider": provider,
        "model": model,
        "prompt_version": prompt_version,
        "prompt_sha256": prompt_hash,
        "temperature": temperature,
    }
    if ask:  # the first ask keeps the key it always had: existing caches still answer it
        fields["ask"] = ask
    material = json.dumps(fields, sort_keys=True)
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


class _Database:
    """One cache folder's database: a connection for reads (any thread) and one for the
    writer thread, so a lookup on the event loop never waits for a write."""

    def __init__(self, folder: Path) -> None:
        path = folder / DB_NAME
        self.writes = open_cache_db(path, _SCHEMA, "judge_responses")
        self.reads = open_cache_db(path, _SCHEMA, "judge_responses")
        self.read_lock = threading.Lock()
        _import_entry_files(folder, self.writes)

    def get(self, key: str) -> str | None:
        with self.read_lock:
            row = self.reads.execute(
                "SELECT value FROM judge_responses WHERE key = ?", (key,)
            ).fetchone()
        return None if row is None else str(row[0])

    def close(self) -> None:
        """Close both connections (a use after this raises sqlite3.ProgrammingError)."""
        with self.read_lock:
            self.reads.close()
            self.writes.close()


def _import_entry_files(folder: Path, db: sqlite3.Connection) -> None:
    """Move the entries of an earlier version's one-file-per-entry cache into ``db``."""
    files = [
        path
        for sub in folder.glob("[0-9a-f][0-9a-f]")
        if sub.is_dir()
        for path in sub.glob("*.json")
        if _KEY.fullmatch(path.stem) and path.stem.startswith(sub.name)
    ]
    if not files:
        return
    rows: list[tuple[object, ...]] = []
    for path in files:
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # unreadable entries were misses before; they are dropped
        if isinstance(value, dict):
            rows.append((path.stem, json.dumps(value, ensure_ascii=False)))
    # Entries already in the database are newer than the files: keep them.
    if not write_rows(db, "INSERT OR IGNORE INTO judge_responses VALUES (?, ?)", rows):
        return  # the files stay, to be imported next time
    for path in files:
        path.unlink(missing_ok=True)
    for sub in {path.parent for path in files}:
        for leftover in sub.glob(".tmp-*.json"):  # temporary files of killed writers
            leftover.unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # not empty: something else lives there
            sub.rmdir()
    log.info("judge cache: moved %d entries of %s into %s", len(rows), folder, DB_NAME)


class _Writer:
    """The one thread writing cache entries, and the entries it has yet to write."""

    def __init__(self) -> None:
        self.pending: dict[tuple[Path, str], dict[str, Any]] = {}
        self.lock = threading.Lock()
        self.queue: queue.Queue[tuple[Path, str]] = queue.Queue()
        self.thread: threading.Thread | None = None
        self.databases: OrderedDict[Path, _Database] = OrderedDict()

    def database(self, folder: Path) -> _Database:
        """The database of ``folder``, opened once per process (thread-safe). A run uses
        one folder; a process that goes through many (a test suite) keeps the last
        ``_OPEN_DATABASES`` open rather than two connections for each."""
        with self.lock:
            db = self.databases.get(folder)
            if db is None:
                db = self.databases[folder] = _Database(folder)
                while len(self.databases) > _OPEN_DATABASES:
                    self.databases.popitem(last=False)[1].close()
            self.databases.move_to_end(folder)
            return db

    def submit(self, folder: Path, key: str, value: dict[str, Any]) -> None:
        with self.lock:
            self.pending[(folder, key)] = value
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="judge-cache", daemon=True)
                self.thread.start()
                atexit.register(self.flush)
        self.queue.put((folder, key))

    def _run(self) -> None:
        while True:
            turn = [self.queue.get()]
            while len(turn) < _WRITE_BATCH:
                try:
                    turn.append(self.queue.get_nowait())
                except queue.Empty:
                    break
            try:
                self._write(turn)
            except Exception as exc:  # this thread must live on, or every flush would hang
                log.warning("judge cache: %d entries not written: %s", len(turn), exc)
            finally:
                for _ in turn:
                    self.queue.task_done()

    def _write(self, turn: list[tuple[Path, str]]) -> None:
        # The same entry put twice is queued twice: it is written once, with its latest
        # value, and a later turn finds nothing left for it.
        with self.lock:
            found = {item: self.pending.get(item) for item in turn}
        entries = {item: value for item, value in found.items() if value is not None}
        by_folder: dict[Path, list[tuple[object, ...]]] = {}
        for (folder, key), value in entries.items():
            by_folder.setdefault(folder, []).append((key, json.dumps(value, ensure_ascii=False)))
        for folder, rows in by_folder.items():
            try:
                write_rows(self.database(folder).writes, _INSERT, rows)
            except (OSError, sqlite3.Error) as exc:  # a cache that cannot be written only
                log.warning("judge cache: cannot write to %s: %s", folder, exc)  # costs calls
        with self.lock:
            for item, value in entries.items():
                if self.pending.get(item) is value:
                    del self.pending[item]

    def flush(self) -> None:
        if self.thread is not None:
            self.queue.join()


_WRITER = _Writer()


class JudgeCache:
    """Judge responses under ``folder`` (for example ``EVALHOUSE_HOME/cache``)."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder).absolute()
        """Where the database lives."""
        # Opened when the judge is built, not by its first lookup on the event loop:
        # moving an old cache's files in takes about a second per 10,000 entries.
        try:
            _WRITER.database(self.folder)
        except (OSError, sqlite3.Error) as exc:  # each lookup tries again; calls still work
            log.warning("judge cache %s cannot be opened: %s", self.folder, exc)

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry, or None (missing or unreadable entries are misses)."""
        with _WRITER.lock:
            waiting = _WRITER.pending.get((self.folder, key))
        if waiting is not None:
            return waiting
        try:
            stored = _WRITER.database(self.folder).get(key)
            value = json.loads(stored) if stored is not None else None
        except (OSError, sqlite3.Error, ValueError) as exc:
            log.debug("judge cache: %s is a miss: %s", key, exc)
            return None
        return value if isinstance(value, dict) else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        """Store an entry: served by ``get`` at once, written by the background writer."""
        _WRITER.submit(self.folder, key, dict(value))

    def flush(self) -> None:
        """Wait until every entry put so far (by any cache of the process) is on disk."""
        _WRITER.flush()
