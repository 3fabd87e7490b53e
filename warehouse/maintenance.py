"""Maintenance of a DuckLake catalog: fewer, larger files and fewer snapshots.

Every ingest commit is a snapshot and writes a few small Parquet files (or inlines small
inserts into the catalog's PostgreSQL tables); at fifty engineers ingesting after every
flush that is hundreds of thousands of snapshots and over a million files. Nothing ever
deletes a file by itself: old snapshots keep theirs for time travel, and an ingester killed
between writing its files and committing leaves them behind, referenced by nothing.

``maintain`` runs DuckLake's own functions (those of the installed extension, DuckLake
format 1.0), in this order, each in its own transaction:

1. ``ducklake_flush_inlined_data``: inlined rows are written out to Parquet;
2. ``ducklake_merge_adjacent_files``: small files of a table are merged into larger ones;
3. ``ducklake_expire_snapshots``: snapshots older than ``keep_s`` go (time travel to them
   ends); the files only they referenced, the merged-away ones included, are scheduled
   for deletion. Merging before expiring lets one pass free the merged-away files;
4. ``ducklake_cleanup_old_files``: files scheduled for deletion more than ``grace_s`` ago
   are deleted;
5. ``ducklake_delete_orphaned_files``: files in the data folder that the catalog does not
   know, older than ``grace_s``, are deleted (what killed ingesters left). The grace
   period protects an ingester that is writing its files right now and commits later.

No row changes: the report counts every table's rows before and after. Steps 1 to 3
rewrite the catalog, so they run under the catalog's commit lock (``warehouse.commit_lock``,
the one every ingest commit holds): an ingest never commits in the middle of a compaction,
and one that waits meanwhile keeps its records in the lake. When the lock is taken,
maintenance says who holds it and waits (``wait_s``). The deletions (4, 5) change no
table and run after the lock is released; the grace period protects in-flight files.
These functions are refused in analysts' SQL (``ducklake_*`` in ``warehouse.db``); this module
is the operator's way in.

A pass runs in a child process (``warehouse.maintenance_child``): DuckLake's functions have
aborted the process that called them (native crashes of the merge of small files are on
DuckLake's tracker: duckdb/ducklake#281, #464, #525), and the scheduler of ``evalhouse
maintain --every`` or a test worker must outlive that. A pass whose process dies is run once
more: each step is complete or not done, so the second pass finishes what the first left.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack, suppress
from dataclasses import asdict, dataclass, field
from typing import Any

import duckdb

from warehouse import FILE_GRACE_S, SNAPSHOT_KEEP_S, errors
from warehouse.catalog import LAKE, Catalog, CatalogError, write_connection
from warehouse.commit_lock import advisory_lock
from warehouse.db import one_line
from warehouse.errors import LOCK_WAIT_S
from warehouse.schema import quote_ident


@dataclass
class Census:
    """What a catalog holds at one moment."""

    snapshots: int
    files: int
    """Parquet files in the data folder (referenced or not)."""
    rows: dict[str, int]


@dataclass
class MaintenanceReport:
    """The catalog before and after, and what each step did."""

    before: Census
    after: Census
    steps: dict[str, int] = field(default_factory=dict)
    """Rows each DuckLake function returned (tables flushed, merges, snapshots expired,
    files deleted)."""
    seconds: float = 0.0

    def line(self) -> str:
        """One human line with the figures an operator checks."""
        b, a = self.before, self.after
        same = "unchanged" if b.rows == a.rows else "CHANGED"
        return (
            f"maintained the catalog in {self.seconds:.1f} s: snapshots {b.snapshots} -> "
            f"{a.snapshots}, data files {b.files} -> {a.files}, rows {same} "
            f"({sum(a.rows.values())})"
        )


def census(con: duckdb.DuckDBPyConnection, catalog: Catalog) -> Census:
    """Count snapshots, data files and the rows of every table."""
    row = con.execute(f"SELECT count(*) FROM ducklake_snapshots('{LAKE}')").fetchone()
    tables = [
        str(r[0])
        for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = $db "
            "AND schema_name = 'main' ORDER BY table_name",
            {"db": LAKE},
        ).fetchall()
    ]
    rows = {}
    for table in tables:
        found = con.execute(f"SELECT count(*) FROM {quote_ident(table)}").fetchone()
        rows[table] = int(found[0]) if found else 0
    return Census(int(row[0]) if row else 0, catalog.data_files(con), rows)


def _steps(keep_s: float, grace_s: float) -> list[tuple[str, str, dict[str, object]]]:
    """(name, SQL, parameters) of each step. Ages are taken from the server's clock when
    the step runs (``now()``), so a grace of 0 also covers files the earlier steps just
    scheduled for deletion. Run with ``CALL`` and read as Arrow: ``SELECT count(*) FROM
    ducklake_...()`` returns a count but commits nothing (measured), and the functions
    return TIMESTAMP WITH TIME ZONE columns, which DuckDB's Python rows need pytz for."""
    keep: dict[str, object] = {"us": int(keep_s * 1e6)}
    grace: dict[str, object] = {"us": int(grace_s * 1e6)}
    older = "older_than => now() - to_microseconds($us::BIGINT)"
    return [
        ("flushed", f"CALL ducklake_flush_inlined_data('{LAKE}')", {}),
        ("merged", f"CALL ducklake_merge_adjacent_files('{LAKE}')", {}),
        ("expired", f"CALL ducklake_expire_snapshots('{LAKE}', {older})", keep),
        ("deleted", f"CALL ducklake_cleanup_old_files('{LAKE}', {older})", grace),
        ("orphans", f"CALL ducklake_delete_orphaned_files('{LAKE}', {older})", grace),
    ]


_LOCKED_STEPS = ("flushed", "merged", "expired")
"""The steps that rewrite the catalog: run under the commit lock."""
CRASH_RETRIES = 1
"""Passes run again after the process of one died (a second death is reported)."""


def maintain(
    catalog: Catalog,
    *,
    keep_s: float = SNAPSHOT_KEEP_S,
    grace_s: float = FILE_GRACE_S,
    wait_s: float = LOCK_WAIT_S,
    on_message: Callable[[str], None] | None = None,
) -> MaintenanceReport:
    """Run the maintenance steps (module docstring) on ``catalog`` in a child process, once
    more if that process dies; ``CatalogError`` in one line when a step fails or the pass
    died twice (the steps done before stay done: each is complete), ``WarehouseBusy``
    naming the holder when the commit lock stays taken for ``wait_s``; ``on_message``
    hears who holds it when maintenance has to wait, and of a pass run again."""
    request = json.dumps(
        {
            "catalog": f"postgres:{catalog.conninfo}",  # on standard input, never argv
            "catalog_data": str(catalog.data_path),
            "keep_s": keep_s,
            "grace_s": grace_s,
            "wait_s": wait_s,
        }
    )
    for attempt in range(CRASH_RETRIES + 1):
        report, died = _child_pass(request, on_message)
        if report is not None:
            return report
        if attempt < CRASH_RETRIES and on_message is not None:
            on_message(f"maintenance of {catalog.label}: its process died ({died}); once more")
    raise CatalogError(
        f"maintenance of {catalog.label}: its process died twice ({died}); the steps it "
        "finished are done, run it again"
    )


def _child_pass(
    request: str, on_message: Callable[[str], None] | None
) -> tuple[MaintenanceReport | None, str]:
    """One pass in ``warehouse.maintenance_child``: its report, or None and how its process
    died. Its messages reach ``on_message`` as they come; its error is raised here."""
    outcome: dict[str, Any] = {}
    child = subprocess.Popen(
        [sys.executable, "-m", "warehouse.maintenance_child"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        # a dying process's dump is not the operator's one line (and no pipe fills up)
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write(request)
        child.stdin.close()
        for line in child.stdout:
            message: object = None
            with suppress(ValueError):
                message = json.loads(line)
            if not isinstance(message, dict):
                continue
            if "message" in message and on_message is not None:
                on_message(str(message["message"]))
            outcome.update(message)
        code = child.wait()
    finally:
        if child.poll() is None:  # Ctrl-C or an error here: the pass stops with us
            child.kill()
            child.wait()
    if "report" in outcome:
        return _report(outcome["report"]), ""
    if "error" in outcome:
        kind = getattr(errors, str(outcome["error"].get("kind")), CatalogError)
        if not (isinstance(kind, type) and issubclass(kind, errors.WarehouseError)):
            kind = CatalogError
        raise kind(str(outcome["error"].get("message", "")))
    return None, f"signal {-code}" if code < 0 else f"exit {code}"


def _report(found: dict[str, Any]) -> MaintenanceReport:
    return MaintenanceReport(
        Census(**found["before"]),
        Census(**found["after"]),
        {str(k): int(v) for k, v in found["steps"].items()},
        float(found["seconds"]),
    )


def report_json(report: MaintenanceReport) -> str:
    """``report`` as the child sends it."""
    return json.dumps({"report": asdict(report)})


def maintain_here(
    catalog: Catalog,
    *,
    keep_s: float,
    grace_s: float,
    wait_s: float,
    on_message: Callable[[str], None] | None,
) -> MaintenanceReport:
    """``maintain``'s pass in this process (``warehouse.maintenance_child`` runs it, with
    every option from its request)."""
    started = time.perf_counter()
    connected = write_connection(catalog, wait_s=wait_s, on_wait=on_message)
    with connected as (con, _guard), ExitStack() as locked:
        report = MaintenanceReport(census(con, catalog), census(con, catalog))
        locked.enter_context(advisory_lock(con, wait_s, on_message))
        for name, sql, params in _steps(keep_s, grace_s):
            if name not in _LOCKED_STEPS:
                locked.close()  # the lock is released before the first deletion
            try:
                done = con.execute(sql, params or None).to_arrow_table().num_rows
            except duckdb.Error as exc:
                raise CatalogError(
                    f"maintenance of {catalog.label} stopped at {name!r}: "
                    f"{catalog.redact(one_line(str(exc)))[:300]}; the steps before it are done, "
                    "run it again"
                ) from None
            report.steps[name] = done
        report.after = census(con, catalog)
    report.seconds = time.perf_counter() - started
    return report
