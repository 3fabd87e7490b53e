"""Analyst SQL in a child process with a memory ceiling and a wall-clock limit.

The read-only sandbox (``db.check_query``, the locked configuration) decides what a query
may touch; this decides how much it may cost. DuckDB's ``memory_limit`` does not count
every allocation (``SELECT repeat('x', 900000000)`` builds a 900 MB string past a 1 GB
limit) and an interrupt cannot stop a single long function call, so a query typed into the
SQL page or ``evalhouse sql`` runs in its own process: its address space is capped
(``RLIMIT_AS``), its result is capped in bytes, and it is killed when its time is up. The
dashboard and the shell that asked are never the ones that run out of memory.

The child is ``python -m warehouse.sandbox_child``: it reads one JSON request on standard
input and writes the result as an Arrow IPC stream on standard output (a JSON header line
first), or one JSON line (the error's type and message) on standard error and exit code 2.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

import polars as pl

from warehouse import errors
from warehouse.errors import QueryError

SQL_MEMORY_BYTES = 2_560 * 1024 * 1024
"""Address space of the child: about 0.8 GB is the interpreter with DuckDB, polars and
pyarrow loaded, the rest is the query's."""
MAX_RESULT_BYTES = 64 * 1024 * 1024
"""Largest result sent back (Arrow bytes); a larger one is refused, not truncated."""
START_GRACE_S = 15.0
"""Time the child may take to start and connect, on top of the query's own limit."""
EXIT_REFUSED = 2
EXIT_OUT_OF_MEMORY = 3


@dataclass(frozen=True)
class SandboxRequest:
    """What the child runs: where the warehouse is, the query and its limits."""

    warehouse: str
    catalog: str | None
    catalog_data: str | None
    sql: str
    time_limit_s: float
    row_cap: int | None


def run_isolated(request: SandboxRequest, memory_bytes: int = SQL_MEMORY_BYTES) -> Any:
    """Run the request in a child process; returns a ``db.QueryResult``. ``QueryError``
    (one line) when the query fails, runs out of time, or needs more memory or result
    bytes than allowed."""
    from warehouse.db import QueryResult

    payload = json.dumps({**request.__dict__, "memory_bytes": memory_bytes}).encode()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "warehouse.sandbox_child"],
            input=payload,
            capture_output=True,
            timeout=request.time_limit_s + START_GRACE_S,
            check=False,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        )
    except subprocess.TimeoutExpired as exc:
        limit = f"{request.time_limit_s:.0f} s"
        raise QueryError(f"the query ran longer than {limit} and was stopped") from exc
    if done.returncode == 0:
        header, _, body = done.stdout.partition(b"\n")
        meta = json.loads(header)
        frame = pl.read_ipc_stream(body) if body else pl.DataFrame()
        return QueryResult(frame, bool(meta["truncated"]), float(meta["elapsed_ms"]))
    said = done.stderr.decode("utf-8", "replace").strip().splitlines()
    if done.returncode == EXIT_REFUSED and said:
        try:
            refusal = json.loads(said[-1])
        except ValueError:
            raise QueryError(said[-1]) from None
        # The same error type the query would have raised in this process (a missing or
        # broken warehouse is no query error).
        kind = getattr(errors, str(refusal.get("kind")), QueryError)
        if not (isinstance(kind, type) and issubclass(kind, errors.WarehouseError)):
            kind = QueryError
        raise kind(str(refusal.get("message", "")))
    raise QueryError(
        "the query needed more memory than analyst SQL may use "
        f"({memory_bytes / 2**30:.1f} GB for its whole process) and was stopped"
    )
