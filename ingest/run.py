"""The ingest procedure (see the package docstring)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from stat import S_ISREG

from engine.lake import CHILD_TABLES, list_parts, sweep_orphans
from engine.run.identity import mark_abandoned_runs
from engine.settings import Paths
from warehouse.catalog import Catalog
from warehouse.errors import LOCK_WAIT_S
from warehouse.loader import PartRef, open_writer

BATCH_FILES = 2_000
"""Parts per transaction: large enough for speed, small enough to bound a retry. A batch
holds whole (run, iteration) partitions only, so it may exceed this by one partition."""


@dataclass
class IngestReport:
    """What one ingest did."""

    files_loaded: int = 0
    rows: dict[str, int] = field(default_factory=dict)
    corrupt: list[tuple[str, str]] = field(default_factory=list)
    already_loaded: int = 0
    waiting: int = 0
    """Detail parts whose results part is not published yet (loaded by a later ingest)."""
    rebuilt: bool = False
    seconds: float = 0.0
    interrupted: list[str] = field(default_factory=list)
    """Runs left ``running`` by a process that is gone, now recorded as interrupted."""
    upgraded: str | None = None
    """What upgrading a catalog's schema in place changed (one line), when it was done."""

    def summary(self) -> str:
        """The headline, then one line per corrupt part."""
        return "\n".join([self.headline(), *self.interrupted_lines(), *self.corrupt_lines()])

    def interrupted_lines(self) -> list[str]:
        """One line per run this ingest recorded as interrupted, saying how to resume it."""
        return [
            f"run {run_id} was left running by a process that is gone: now interrupted "
            f"(resume it with --resume {run_id})"
            for run_id in self.interrupted
        ]

    def headline(self) -> str:
        """One human line (with the count of corrupt parts skipped, if any)."""
        if self.files_loaded == 0 and not self.corrupt:
            head = f"nothing new to ingest ({self.already_loaded} parts already loaded)"
        else:
            rows = ", ".join(f"{n} {t}" for t, n in sorted(self.rows.items()) if n)
            head = (
                f"ingested {self.files_loaded} parts ({rows or 'no rows'}) in {self.seconds:.2f} s"
            )
        if self.waiting:
            head += f"; {self.waiting} detail parts wait for their results part"
        if self.rebuilt:
            head = "rebuilt the warehouse from the lake; " + head
        if self.upgraded:
            head = f"{self.upgraded}; {head}"
        if self.corrupt:
            head += f"; skipped {len(self.corrupt)} corrupt part(s)"
        return head

    def corrupt_lines(self) -> list[str]:
        """One line per part skipped as corrupt: its path and why."""
        return [f"skipped corrupt part {path}: {reason}" for path, reason in self.corrupt]


def _refs(paths: Paths) -> tuple[list[PartRef], int, list[tuple[str, str]]]:
    """Parts ready to load, how many child parts wait for their results part, and the
    part names that are no regular file (path, reason).

    A child part (claims, highlights, ...) is ready only when a results part of the same
    (run, iteration) was published after it: the runner writes a flush's children first
    and its results last, so a child part without a later results part belongs to a
    flush that is still being written, or that a killed run left behind (the resumed run
    sets those aside). Loading it early could count a sample's details twice.
    """
    found: list[tuple[PartRef, int]] = []
    odd: list[tuple[str, str]] = []
    for part in list_parts(paths.lake):
        try:
            stat = part.path.stat()
        except FileNotFoundError:
            continue
        if not S_ISREG(stat.st_mode):
            # DuckDB would block forever reading a FIFO, or fail on a folder: never load it.
            odd.append((str(part.path), "not a regular file (a folder, FIFO or device)"))
            continue
        ref = PartRef(
            path=part.path,
            relative=part.path.relative_to(paths.lake).as_posix(),
            table=part.table,
            run_id=part.run_id,
            iteration=part.iteration,
            size_bytes=stat.st_size,
        )
        found.append((ref, stat.st_mtime_ns))
    latest_results: dict[tuple[str, int], int] = {}
    for ref, mtime in found:
        if ref.table == "results":
            key = (ref.run_id, ref.iteration)
            latest_results[key] = max(latest_results.get(key, 0), mtime)
    ready = [
        ref
        for ref, mtime in found
        if ref.table not in CHILD_TABLES
        or mtime <= latest_results.get((ref.run_id, ref.iteration), -1)
    ]
    return ready, len(found) - len(ready), odd


def partition_batches(refs: list[PartRef], limit: int) -> list[list[PartRef]]:
    """``refs`` cut into batches of about ``limit`` parts that never split a (run, iteration)
    partition: every table of a partition loads in one transaction, so a reader never sees
    a partition's results without its claims, even when ingest is killed between batches."""
    partitions: dict[tuple[str, int], list[PartRef]] = {}
    for ref in refs:  # table-major order: a run's state partition (iteration 0) comes first
        partitions.setdefault((ref.run_id, ref.iteration), []).append(ref)
    batches: list[list[PartRef]] = []
    current: list[PartRef] = []
    for parts in partitions.values():
        if current and len(current) + len(parts) > limit:
            batches.append(current)
            current = []
        current.extend(parts)
    if current:
        batches.append(current)
    return batches


def ingest(
    paths: Paths,
    *,
    rebuild: bool = False,
    wait_s: float = LOCK_WAIT_S,
    on_message: Callable[[str], None] | None = None,
    catalog: Catalog | None = None,
) -> IngestReport:
    """Load every lake part not yet in the warehouse (the file, or ``catalog`` when given).
    Raises ``WarehouseBusy`` when the file stays locked.

    Several ingests may load one catalog at once, from the same or different lakes: each
    part is loaded once (the ledger is keyed by the part's path relative to its lake)."""
    started = time.perf_counter()
    report = IngestReport()
    sweep_orphans(paths.lake)
    report.interrupted = mark_abandoned_runs(paths)
    refs, report.waiting, report.corrupt = _refs(paths)
    with open_writer(paths.warehouse, wait_s=wait_s, catalog=catalog) as writer:
        report.rebuilt = writer.ensure_schema(rebuild=rebuild)
        if writer.upgraded is not None:
            report.upgraded = writer.upgraded.line()
        done = writer.loaded_paths()
        new = [r for r in refs if r.relative not in done]
        report.already_loaded = len(refs) - len(new)
        batches = partition_batches(new, BATCH_FILES)
        taken = 0
        for batch in batches:
            result = writer.load_batch(batch)
            taken += len(batch)
            report.files_loaded += result.loaded
            # On a catalog, another ingester may have loaded some of the batch meanwhile.
            report.already_loaded += len(batch) - result.loaded - len(result.corrupt)
            report.corrupt += result.corrupt
            for table, n in result.rows.items():
                report.rows[table] = report.rows.get(table, 0) + n
            if on_message and len(batches) > 1:
                on_message(f"ingested {taken}/{len(new)} parts")
        if new:
            writer.checkpoint()
    report.seconds = time.perf_counter() - started
    return report
