"""The Parquet lake: append-only part files, the source of truth of every result.

Layout: ``lake/<table>/run_id=<id>/iteration=<n>/part-<seq>.parquet``.

A part is written to a hidden temporary file in the same folder, fsynced, then
published with ``os.link`` (which fails if the name exists, so an existing part is
never rewritten) and the temporary name removed. Readers and ingest ignore names
that start with a dot, so a writer killed at any moment leaves no visible partial
part: at worst an orphan ``.tmp`` file, which ``sweep_orphans`` removes.

Several writers may share one lake (two runs in one home, a run and an ingest). A
temporary name therefore says who owns it (``.part-<pid>-<token>@<host>.tmp``) and the
sweep removes only what no live writer can still be writing: files of a dead process on
this host, and files older than ``ORPHAN_AGE_S`` whoever wrote them.
"""

from __future__ import annotations

import os
import re
import socket
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel

from engine.columns import arrow_schema
from engine.errors import InputError
from engine.models import LAKE_TABLES
from engine.secrets import redact_value

CHILD_TABLES = (
    "claims",
    "highlights",
    "attributions",
    "verdicts",
    "judge_asks",
    "grader_scores",
    "sample_scores",
    "turns",
    "conversation_scores",
)
"""Per-sample detail tables. A writer publishes their parts first and the ``results`` part
of the same samples last: a child part counts only once a results part of its partition
was published after it (ingest waits for that; a resumed run sets orphans aside)."""

PART_RE = re.compile(r"^part-(\d+)\.parquet$")
_SAFE_ID = re.compile(r"^[A-Za-z0-9._-]+$")
_TMP_RE = re.compile(r"^\.part-(\d+)-[0-9a-f]+@(.*)\.tmp$")

ORPHAN_AGE_S = 6 * 3600.0
"""A temporary part older than this is an orphan even if its owner's pid is alive (the pid
may have been reused, or the owner runs on another host): writing one part takes seconds."""


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9.-]", "_", socket.gethostname()) or "host"


def temp_part_name() -> str:
    """A temporary part name owned by this process and this call: pid, token and host."""
    return f".part-{os.getpid()}-{uuid.uuid4().hex}@{_host()}.tmp"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        return True
    except OSError:
        return False
    return True


def _is_orphan(tmp: Path, now: float) -> bool:
    """Whether no live writer can still be writing ``tmp``."""
    try:
        age = now - tmp.stat().st_mtime
    except FileNotFoundError:
        return False
    if age > ORPHAN_AGE_S:
        return True
    owner = _TMP_RE.match(tmp.name)
    if owner is None:
        # A name without an owner comes from a writer older than owner-tagged names; it
        # cannot tell us who wrote it, so it is treated as before: an orphan.
        return True
    pid, host = int(owner.group(1)), owner.group(2)
    if host != _host():
        return False  # another machine's writer: only its age can tell
    return not _pid_alive(pid)


class LakeError(InputError):
    """A lake operation failed; the message names the file."""


@dataclass(frozen=True)
class PartInfo:
    """A published part file and where it sits in the lake."""

    path: Path
    table: str
    run_id: str
    iteration: int


def partition_dir(lake: Path, table: str, run_id: str, iteration: int) -> Path:
    """The folder holding the parts of one (table, run, iteration)."""
    if table not in LAKE_TABLES:
        raise LakeError(f"unknown lake table {table!r}")
    if not _SAFE_ID.match(run_id):
        raise LakeError(f"run id {run_id!r} may hold only letters, digits, '.', '_' and '-'")
    return lake / table / f"run_id={run_id}" / f"iteration={iteration}"


def _next_seq(folder: Path) -> int:
    seqs = [int(m.group(1)) for p in folder.iterdir() if (m := PART_RE.match(p.name))]
    return max(seqs, default=0) + 1


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_part(
    lake: Path,
    table: str,
    run_id: str,
    iteration: int,
    records: Sequence[BaseModel] | Sequence[Mapping[str, object]],
) -> Path | None:
    """Write ``records`` as one new part and return its path (None when empty).

    Records are validated against the table's model, so a part never holds a row the
    warehouse cannot load.
    """
    if not records:
        return None
    model = LAKE_TABLES[table]
    # Every string passes the secret registry on its way to disk: a server that echoes a
    # credential in an answer, a verdict's evidence or an error must not put it in the lake.
    rows = [
        {
            k: redact_value(v)
            for k, v in (r if isinstance(r, model) else model.model_validate(r))
            .model_dump(mode="python")
            .items()
        }
        for r in records
    ]
    arrow = pa.Table.from_pylist(rows, schema=arrow_schema(model))
    folder = partition_dir(lake, table, run_id, iteration)
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / temp_part_name()
    try:
        with open(tmp, "wb") as handle:
            pq.write_table(arrow, handle, compression="zstd")
            handle.flush()
            os.fsync(handle.fileno())
        while True:
            final = folder / f"part-{_next_seq(folder):06d}.parquet"
            try:
                os.link(tmp, final)  # atomic and never replaces an existing part
                break
            except FileExistsError:
                continue
    finally:
        tmp.unlink(missing_ok=True)
    _fsync_dir(folder)
    return final


def list_parts(lake: Path, tables: Iterable[str] | None = None) -> list[PartInfo]:
    """Every published part, sorted by table load order, run, iteration and name."""
    out: list[PartInfo] = []
    order = list(LAKE_TABLES) if tables is None else list(tables)
    for table in order:
        root = lake / table
        if not root.is_dir():
            continue
        for run_dir in sorted(root.iterdir()):
            if not run_dir.name.startswith("run_id="):
                continue
            run_id = run_dir.name.removeprefix("run_id=")
            for it_dir in sorted(run_dir.iterdir()):
                if not it_dir.name.startswith("iteration="):
                    continue
                try:
                    iteration = int(it_dir.name.removeprefix("iteration="))
                except ValueError:
                    continue
                for part in sorted(it_dir.iterdir()):
                    if PART_RE.match(part.name):
                        out.append(PartInfo(part, table, run_id, iteration))
    return out


def sweep_orphans(lake: Path) -> int:
    """Remove temporary parts left by killed writers, never a live writer's; returns how
    many were removed."""
    removed = 0
    if lake.is_dir():
        now = time.time()
        for tmp in lake.rglob(".part-*.tmp"):
            if _is_orphan(tmp, now):
                try:
                    tmp.unlink()
                except FileNotFoundError:
                    continue  # another sweeper took it first
                removed += 1
    return removed


def read_table(
    lake: Path,
    table: str,
    run_id: str,
    iteration: int | None = None,
    columns: Sequence[str] | None = None,
) -> pa.Table:
    """All rows of one run (optionally one iteration) of a lake table, with only
    ``columns`` when given (a run's own bookkeeping needs a few numbers, not its texts).

    Used by the runner to learn which samples are already flushed; small by design
    (one run). Analysts use the warehouse, not this.
    """
    model = LAKE_TABLES[table]
    schema = arrow_schema(model)
    if columns is not None:
        schema = pa.schema([schema.field(name) for name in columns])  # KeyError: no such column
    parts = [
        p.path
        for p in list_parts(lake, [table])
        if p.run_id == run_id and (iteration is None or p.iteration == iteration)
    ]
    tables: list[pa.Table] = []
    for path in parts:
        try:
            with pq.ParquetFile(path) as part:
                stored = part.schema_arrow.names
                got = part.read(
                    columns=None if columns is None else [c for c in columns if c in stored]
                )
        except (OSError, pa.ArrowException) as exc:
            raise LakeError(f"{path}: unreadable part ({exc})") from exc
        # Older parts may lack columns added since; fill them with nulls.
        cols = [
            got.column(f.name) if f.name in got.column_names else pa.nulls(len(got), f.type)
            for f in schema
        ]
        tables.append(pa.Table.from_arrays(cols, schema=schema.with_metadata(None)))
    if not tables:
        return schema.empty_table()
    return pa.concat_tables(tables, promote_options="permissive")
