"""The database behind a disk cache (embeddings, judge responses): sqlite3 in WAL mode.

Why sqlite rather than one file per entry: a transaction stores a whole batch of entries
(crash-safe: a killed run loses at most the batch in flight), a lookup by primary key
takes microseconds, and WAL lets several processes read while one writes. One small file
per judge reply (created, then renamed) cost 0.48 CPU-ms an entry on this project's
machine, mostly in the kernel, against 0.04 in batches here: ``python -m
tests.bench.judge_cache``. At 128 calls in flight that was a sixth of the run's CPU.

A cache is only ever an optimisation, so a damaged database never stops a run: it is set
aside (renamed ``NAME.corrupt-TIME``) and an empty one is started.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path

log = logging.getLogger(__name__)


def open_cache_db(path: Path, schema: str, table: str) -> sqlite3.Connection:
    """A connection to the cache database ``path`` (folder created, ``schema`` applied,
    ``table`` read once to prove the file sound), in autocommit mode: callers open their
    own transactions. A file sqlite cannot read is set aside and replaced."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        return _connect(path, schema, table)
    except sqlite3.DatabaseError as exc:
        aside = path.with_name(f"{path.name}.corrupt-{int(time.time())}")
        log.warning("cache %s is unreadable (%s); moved to %s", path, exc, aside)
        path.rename(aside)
        return _connect(path, schema, table)


def _connect(path: Path, schema: str, table: str) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=30.0, check_same_thread=False, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute(schema)
        db.execute(f"SELECT count(*) FROM {table} WHERE 0").fetchall()
    except sqlite3.DatabaseError:
        db.close()
        raise
    return db


def write_rows(db: sqlite3.Connection, sql: str, rows: Sequence[tuple[object, ...]]) -> bool:
    """Run ``sql`` for every row in one transaction; False (and a warning) when sqlite
    fails, with nothing written: a cache write that fails only costs recomputing."""
    try:
        db.execute("BEGIN IMMEDIATE")
        db.executemany(sql, rows)
        db.execute("COMMIT")
    except sqlite3.Error as exc:
        if db.in_transaction:
            db.execute("ROLLBACK")
        log.warning("cache write of %d entries failed: %s", len(rows), exc)
        return False
    return True
