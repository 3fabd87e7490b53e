"""The Parquet lake: append-only part files, the source of truth of every result.

Layout: ``lake/<table>/run_id=<id>/iteration=<n>/part-<seq>.parquet``.

A part is written to a hidden temporary file in the same folder, fsynced, then
published with ``os.link`` (which fails if the name exists, so an existing part is
never rewritten) and the temporary name removed. Readers and ingest ignore names
that start with a dot, so a writer killed at any moment leaves no visible partial
part: at worst an orphan ``.tmp`` file, which ``sweep_orphans`` removes.
"""

from __future__ import annotations

import os
import re
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

CHILD_TABLES = (
    "claims",
    "highlights",
    "attributions",
    "verdicts",
    "grader_scores",
    "sample_scores",
)
"""Per-sample detail tables. A writer publishes their parts first and the ``results`` part
of the same samples last: a child part counts only once a results part of its partition
was published after it (ingest waits for that; a resumed run sets orphans aside)."""

PART_RE = re.compile(r"^part-(\d+)\.parquet$")
_SAFE_ID = re.compile(r"^[A-Za-z0-9._-]+$")


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
    rows = [
        (r if isinstance(r, model) else model.model_validate(r)).model_dump(mode="python")
        for r in records
    ]
    arrow = pa.Table.from_pylist(rows, schema=arrow_schema(model))
    folder = partition_dir(lake, table, run_id, iteration)
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".part-{uuid.uuid4().hex}.tmp"
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
    """Remove temporary files left by killed writers; returns how many."""
    removed = 0
    if lake.is_dir():
        for tmp in lake.rglob(".part-*.tmp"):
            tmp.unlink(missing_ok=True)
            removed += 1
    return removed


def read_table(lake: Path, table: str, run_id: str, iteration: int | None = None) -> pa.Table:
    """All rows of one run (optionally one iteration) of a lake table.

    Used by the runner to learn which samples are already flushed; small by design
    (one run). Analysts use the warehouse, not this.
    """
    model = LAKE_TABLES[table]
    schema = arrow_schema(model)
    parts = [
        p.path
        for p in list_parts(lake, [table])
        if p.run_id == run_id and (iteration is None or p.iteration == iteration)
    ]
    tables: list[pa.Table] = []
    for path in parts:
        try:
            got = pq.read_table(path)
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
