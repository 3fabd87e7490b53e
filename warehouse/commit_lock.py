"""The commit lock of a DuckLake catalog: a PostgreSQL advisory lock with a time limit.

Every ingest commit (and every schema change) of a catalog holds one transaction-level
advisory lock on the catalog's server, so that the ledger check and the commit of one
ingester never interleave with another's. An ingester that stops while holding it (a
process suspended, a machine that froze, a debugger) would otherwise block every other
ingester for ever, silently. So the lock is *tried* until a deadline (``--wait``), and
whoever gives up says who holds it: the holder's host and pid (every writer names itself
in PostgreSQL's ``application_name``), its server backend, and since when, with the one
statement that ends a stuck holder. The server releases the lock by itself when the
holder's process dies.
"""

from __future__ import annotations

import os
import random
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from urllib.parse import quote

import duckdb

from warehouse.errors import WarehouseBusy

LOCK_DB = "evalhouse_pg"
"""The PostgreSQL database attached (by writers only) for the advisory lock."""

COMMIT_LOCK_KEY = 4_711_016
"""The advisory lock every ingest commit (and schema change) of a catalog holds."""


_TRY = f"SELECT pg_try_advisory_xact_lock({COMMIT_LOCK_KEY})::text"

# A bigint advisory key is shown in pg_locks as classid (high 32 bits) and objid (low).
_HOLDER = f"""
SELECT a.pid::text AS backend, coalesce(a.application_name, '') AS name,
       coalesce(host(a.client_addr), 'local') AS client,
       coalesce(to_char(a.xact_start AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), '?') AS since,
       coalesce(extract(epoch FROM now() - a.xact_start)::bigint::text, '?') AS age
FROM pg_locks AS l JOIN pg_stat_activity AS a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND l.granted AND l.classid = 0
  AND l.objid = {COMMIT_LOCK_KEY} AND l.objsubid = 1
"""


def writer_name() -> str:
    """How this process names itself to PostgreSQL: ``evalhouse host=H pid=P`` (at most
    63 bytes, PostgreSQL's limit; printable ASCII only, which it requires)."""
    host = "".join(c for c in socket.gethostname() if c.isascii() and c.isprintable())
    return f"evalhouse host={host[:32]} pid={os.getpid()}"[:63]


def lock_conninfo(conninfo: str) -> str:
    """``conninfo`` with this process's ``application_name`` (the last value wins in libpq,
    so a name the user gave is replaced only on the lock's connection)."""
    name = writer_name()
    if conninfo.startswith(("postgres://", "postgresql://")):
        separator = "&" if "?" in conninfo else "?"
        return f"{conninfo}{separator}application_name={quote(name)}"
    return f"{conninfo} application_name='{name}'"


def _holder(cursor: duckdb.DuckDBPyConnection) -> str:
    """Who holds the commit lock, in words (what the server lets this role see)."""
    try:
        rows = cursor.execute(
            "SELECT * FROM postgres_query($db, $sql)", {"db": LOCK_DB, "sql": _HOLDER}
        ).fetchall()
    except duckdb.Error:
        rows = []
    if not rows:
        return "another ingester (PostgreSQL did not say which: it may have just finished)"
    backend, name, client, since, age = (str(v) for v in rows[0])
    who = name if name.startswith("evalhouse") else f"{name or 'a client'} (not evalhouse)"
    return (
        f"{who} from {client}, PostgreSQL backend {backend}, since {since} UTC ({age} s); "
        f"if it is stuck, end it with SELECT pg_terminate_backend({backend})"
    )


@contextmanager
def advisory_lock(
    con: duckdb.DuckDBPyConnection,
    wait_s: float,
    on_wait: Callable[[str], None] | None = None,
) -> Iterator[None]:
    """Hold the catalog's commit lock: a PostgreSQL transaction-level advisory lock taken
    on a cursor of ``con`` (whose ``evalhouse_pg`` is attached), released when the block
    ends, or by the server if the process dies. ``WarehouseBusy`` naming the holder when
    it is not free within ``wait_s`` seconds; ``on_wait`` is told once who holds it when
    the first try finds it taken."""
    holder = con.cursor()
    try:
        holder.execute("BEGIN TRANSACTION")
        deadline = time.monotonic() + wait_s
        attempt = 0
        while True:
            row = holder.execute(
                "SELECT * FROM postgres_query($db, $sql)", {"db": LOCK_DB, "sql": _TRY}
            ).fetchone()
            if row and row[0] == "true":
                break
            if attempt == 0 and on_wait is not None:
                on_wait(
                    f"waiting up to {wait_s:.0f} s for the catalog's commit lock, held by "
                    f"{_holder(holder)}"
                )
            if time.monotonic() >= deadline:
                raise WarehouseBusy(
                    f"the catalog's commit lock stayed taken for {wait_s:.0f} s (--wait), held "
                    f"by {_holder(holder)}. Nothing is lost: the records are safe in the lake; "
                    "run `evalhouse ingest` again."
                )
            time.sleep(min(0.5, 0.01 * 1.5**attempt) * (0.5 + random.random()))
            attempt += 1
        yield
    finally:
        with suppress(duckdb.Error):
            holder.execute("ROLLBACK")
        holder.close()
