"""The commit protocol of a run's records: child parts first, the ``results`` part last.

A flush writes the buffered samples' child tables first and their ``results`` part last:
the results part is the commit marker of its samples. On resume, the done set is read
from the lake (results parts of the run and iteration), so a flushed sample is never sent
to a target or judge again; child parts whose samples have no result (a kill between the
two writes) are orphans, renamed to a dot-name that readers and ingest ignore, and their
samples redone. ``iteration-N/.progress.json`` (the answer-synthesis spec's structure) is
rewritten after flushes (less often as it grows) and when the iteration closes; it mirrors
the lake and is never ahead of it.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from engine.lake import CHILD_TABLES, list_parts, read_table, write_part
from engine.models import ANALYZER_METRICS, Frozen, ResultRecord
from engine.progress import ProgressEntry, progress_file_path, write_progress_file
from engine.settings import Paths

SampleKeyTuple = tuple[str, str]
"""(sample_id, candidate): what is done once per iteration."""

PROGRESS_BACKOFF = 20.0
"""After a progress-file write that took t seconds, the next waits at least 20 t."""

SUMMARY_COLUMNS = (
    "sample_id", "candidate", "query", "scored_at", "cost_usd", "error", "judge_faithfulness",
    "judge_completeness", "passed", *ANALYZER_METRICS,
)  # fmt: skip
"""What the done set keeps of a published sample: the progress file's entry and the run's
totals (a Ray task returns the same per sample)."""


@dataclass
class SampleOutput:
    """One scored sample: its result row and its child rows per lake table."""

    result: ResultRecord
    children: dict[str, list[Frozen]] = field(default_factory=dict)


def sample_hash(sample_id: str) -> str:
    """The spec's progress hash: sha256 of the sample id (``queryLogId``)."""
    return hashlib.sha256(sample_id.encode("utf-8")).hexdigest()


def progress_entry(row: Mapping[str, Any]) -> ProgressEntry:
    """The progress-file entry of a result row. The spec hashes the sample id; a
    candidate's row hashes ``candidate/sample_id`` so entries stay unique per candidate."""
    sample_id = str(row["sample_id"])
    candidate = row.get("candidate") or ""
    summary = {
        "faithfulnessScore": row.get("judge_faithfulness"),
        "completenessScore": row.get("judge_completeness"),
        "passed": row.get("passed"),
        "accuracy": row.get("accuracy"),
        "completeness": row.get("completeness"),
        "attribution": row.get("attribution"),
        "error": row.get("error"),
    }
    if candidate:
        summary["candidate"] = candidate
    return ProgressEntry(
        hash=sample_hash(f"{candidate}/{sample_id}" if candidate else sample_id),
        query_log_id=sample_id,
        question=str(row.get("query") or ""),
        completed_at=row["scored_at"],
        result=summary,
    )


def _part_keys(path: Path) -> set[SampleKeyTuple] | None:
    """(sample_id, candidate) of every row of a lake part; None when it cannot be read."""
    try:
        names = pq.read_schema(path).names
        columns = ["sample_id", "candidate"] if "candidate" in names else ["sample_id"]
        rows = pq.read_table(path, columns=columns).to_pylist()
    except Exception:
        return None
    return {(r["sample_id"], r.get("candidate") or "") for r in rows}


def publish(
    paths: Paths, run_id: str, batch: Sequence[SampleOutput]
) -> dict[int, list[ResultRecord]]:
    """Write a batch's parts, per iteration every child table, then the results part (the
    commit marker); returns the result records published per iteration."""
    by_iteration: dict[int, list[SampleOutput]] = {}
    for output in batch:
        by_iteration.setdefault(output.result.iteration, []).append(output)
    published: dict[int, list[ResultRecord]] = {}
    for iteration, outputs in sorted(by_iteration.items()):
        for table in CHILD_TABLES:
            rows = [row for o in outputs for row in o.children.get(table, ())]
            write_part(paths.lake, table, run_id, iteration, rows)
        # Last: the results part is what marks these samples done.
        results = [o.result for o in outputs]
        write_part(paths.lake, "results", run_id, iteration, results)
        published[iteration] = results
    return published


class LakeWriter:
    """Writes one run's records and its progress files; owns nothing else in the lake."""

    def __init__(self, paths: Paths, run_id: str, test_set_name: str, per_iteration: int):
        self.paths = paths
        self.run_id = run_id
        self.test_set_name = test_set_name
        self.per_iteration = per_iteration
        """Samples of one iteration (cases x lanes), the progress file's total."""
        self._entries: dict[int, list[ProgressEntry]] = {}
        self._progress_due: dict[int, float] = {}
        """Per iteration, when (monotonic) the progress file may next be rewritten."""

    def done_rows(self, iteration: int) -> dict[SampleKeyTuple, dict[str, Any]]:
        """Results already in the lake for this iteration by (sample_id, candidate); child
        parts of samples without a result are set aside as orphans."""
        table = read_table(self.paths.lake, "results", self.run_id, iteration, SUMMARY_COLUMNS)
        rows = {(row["sample_id"], row["candidate"] or ""): row for row in table.to_pylist()}
        done = set(rows)
        for part in list_parts(self.paths.lake, list(CHILD_TABLES)):
            if part.run_id != self.run_id or part.iteration != iteration:
                continue
            keys = _part_keys(part.path)
            if keys is None or not keys <= done:
                # Written by a flush that died before its results part: the samples are redone,
                # so these rows would be duplicates. Dot-names are ignored by readers and ingest.
                part.path.rename(part.path.with_name(f".orphan-{part.path.name}"))
        self._entries[iteration] = [progress_entry(row) for row in rows.values()]
        return rows

    def write(self, batch: Sequence[SampleOutput]) -> None:
        """Publish a batch: per iteration, every child table, then the results part."""
        for iteration, results in publish(self.paths, self.run_id, batch).items():
            self.record(iteration, [r.model_dump() for r in results])

    def record(self, iteration: int, rows: Sequence[Mapping[str, Any]]) -> None:
        """Count result rows published (here or by a Ray task) in the progress file.

        The file is the whole iteration, rewritten: as it grows, it is rewritten less often
        (at most 5% of the time goes to it), so a 100k-sample run does not spend its last
        hours rewriting it. Resume reads the lake, never this file, and the iteration's
        close writes it whole.
        """
        entries = self._entries.setdefault(iteration, [])
        entries.extend(progress_entry(row) for row in rows)
        now = time.monotonic()
        if now < self._progress_due.get(iteration, 0.0):
            return
        self.write_progress(iteration)
        self._progress_due[iteration] = now + (time.monotonic() - now) * PROGRESS_BACKOFF

    def set_aside_orphans(self, iteration: int, keys: set[SampleKeyTuple]) -> None:
        """Set aside the child parts of ``keys`` (a shard whose Ray worker died) that have
        no result: the shard's samples are redone. Parts of other shards are left alone,
        because their tasks may be between their child parts and their results part."""
        table = read_table(
            self.paths.lake, "results", self.run_id, iteration, ("sample_id", "candidate")
        )
        done = {(r["sample_id"], r["candidate"] or "") for r in table.to_pylist()}
        for part in list_parts(self.paths.lake, list(CHILD_TABLES)):
            if part.run_id != self.run_id or part.iteration != iteration:
                continue
            got = _part_keys(part.path)
            if got is not None and got & keys and not got <= done:
                part.path.rename(part.path.with_name(f".orphan-{part.path.name}"))

    def write_progress(self, iteration: int) -> None:
        """Rewrite the iteration's ``.progress.json`` from what is in the lake."""
        write_progress_file(
            progress_file_path(self.paths.progress, self.run_id, iteration),
            test_set_name=self.test_set_name,
            iteration=iteration,
            total=self.per_iteration,
            entries=self._entries.get(iteration, []),
        )

    def metrics_written(self, iteration: int) -> bool:
        """Whether the iteration was closed (its metrics part exists)."""
        return any(
            p.run_id == self.run_id and p.iteration == iteration
            for p in list_parts(self.paths.lake, ["iteration_metrics"])
        )
