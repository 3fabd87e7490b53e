"""Scoring production traces as they arrive: one pass of ``evalhouse monitor``.

A pass reads the trace files of a folder (``engine.testsets.traces``), keeps the traces no
run of the series has scored yet (and, with a sample fraction, the ones the sample picks),
cuts them to the pass's budget, and scores them as one run of the series whose test set is
written beside the monitor's state.

Exactly once, across restarts and ``kill -9``, without a state file to keep in step: what
is scored is what the lake holds. A trace counts as scored once a run of the series has
published its result (error rows included); a pass killed mid-way has published some of its
samples and the next pass scores the rest. Sampling is decided by a hash of the series and
the trace id, so a trace left out stays out whatever the order of passes. One pass runs at a
time per series (a lock in the home); a second waits for none and says who holds it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import socket
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import pyarrow.parquet as pq

from engine.errors import InputError
from engine.files import atomic_write_text
from engine.lake import list_parts
from engine.models import TestCase
from engine.testsets.base import Problem, TestSetError
from engine.testsets.reading import decode, read_bytes
from engine.testsets.traces import MAX_TRACE_FILE_BYTES, read_traces

TRACE_SUFFIXES = (".json", ".jsonl")
"""Files of a trace folder that are read."""
MAX_PASS_BYTES = 2 * MAX_TRACE_FILE_BYTES
"""Most bytes of trace files one pass reads; the newest files beyond it wait for the next
pass (a folder that grew by gigabytes is caught up over several passes)."""


class MonitorError(InputError):
    """A pass cannot start: no trace files, a pass of the series already running."""


@dataclass(frozen=True)
class Budget:
    """What one pass may spend: judge and target calls, and US dollars (None: no cap)."""

    calls: int | None = None
    cost_usd: float | None = None


@dataclass
class PassPlan:
    """The traces a pass scores, and what it left for later and why."""

    cases: list[TestCase]
    """New traces to score, oldest first."""
    seen: int = 0
    """Traces in the files read."""
    scored_before: int = 0
    """Of those, traces a run of the series scored already."""
    not_sampled: int = 0
    """New traces the sample fraction left out (for good)."""
    over_budget: int = 0
    """New traces left for a later pass by the budget."""
    problems: list[Problem] = field(default_factory=list)
    """Traces and files skipped, with the reason."""
    files_waiting: int = 0
    """Trace files left for the next pass by ``MAX_PASS_BYTES``."""


def safe_name(series: str) -> str:
    """The series as a folder name."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", series).strip("._")
    digest = hashlib.sha256(series.encode()).hexdigest()[:8]
    return f"{cleaned[:60] or 'series'}-{digest}"


def monitor_dir(home: Path, series: str) -> Path:
    """Where the monitor of ``series`` keeps its lock and the test sets of its passes."""
    return home / "monitor" / safe_name(series)


def sampled(series: str, trace_id: str, fraction: float) -> bool:
    """Whether the sample of ``fraction`` of the series' traces includes ``trace_id``: the
    same answer on every pass."""
    if fraction >= 1.0:
        return True
    digest = hashlib.sha256(f"{series}\0{trace_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


def trace_files(path: Path) -> list[Path]:
    """``path`` itself, or the trace files of the folder, oldest first."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise MonitorError(f"{path}: no such file or folder")
    files = [p for p in path.iterdir() if p.is_file() and p.suffix.lower() in TRACE_SUFFIXES]
    return sorted(files, key=lambda p: (p.stat().st_mtime, p.name))


def scored_ids(lake: Path, series: str) -> set[str]:
    """Sample ids with a published result in any run of ``series``."""
    runs: set[str] = set()
    for part in list_parts(lake, ["runs"]):
        table = pq.read_table(part.path, columns=["series", "name"])
        if series in table.column("series").to_pylist():
            runs.add(part.run_id)
    ids: set[str] = set()
    for part in list_parts(lake, ["results"]):
        if part.run_id in runs:
            ids.update(pq.read_table(part.path, columns=["sample_id"]).column(0).to_pylist())
    return ids


def _started(case: TestCase) -> str:
    return str(case.metadata.get("started_at") or "")


def read_new_traces(path: Path, series: str, lake: Path, fraction: float) -> PassPlan:
    """Every trace of the files under ``path`` that no run of ``series`` has scored and
    the sample picks, oldest first (the budget is applied after)."""
    plan = PassPlan(cases=[])
    done = scored_ids(lake, series)
    seen: set[str] = set()
    budget = MAX_PASS_BYTES
    for file in trace_files(path):
        size = file.stat().st_size
        if size > budget and plan.seen:
            plan.files_waiting += 1
            continue
        budget -= size
        name = str(file)
        try:
            traces = read_traces(name, decode(name, read_bytes(file, name, MAX_TRACE_FILE_BYTES)))
        except TestSetError as exc:
            plan.problems.append(Problem(name, 0, str(exc)))
            continue
        except (InputError, OSError) as exc:
            # Gone since the folder was listed, unreadable, or a pipe: this file waits,
            # the others are scored.
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            plan.problems.append(Problem(name, 0, f"cannot read it: {why}; skipped"))
            continue
        if traces is None:
            plan.problems.append(Problem(name, 0, f"{name}: not a trace export; skipped"))
            continue
        plan.problems.extend(traces.problems)
        for case in traces.cases:
            if case.id in seen:
                continue
            seen.add(case.id)
            plan.seen += 1
            if case.id in done:
                plan.scored_before += 1
            elif not sampled(series, case.id, fraction):
                plan.not_sampled += 1
            else:
                plan.cases.append(case)
    plan.cases.sort(key=_started)
    return plan


def within_budget(
    plan: PassPlan, budget: Budget, estimate: Callable[[Sequence[TestCase]], tuple[int, float]]
) -> None:
    """Cut ``plan.cases`` to the longest oldest-first prefix whose estimated calls and cost
    fit the budget; ``estimate`` gives (calls, USD) for a list of cases."""
    if budget.calls is None and budget.cost_usd is None:
        return
    low, high = 0, len(plan.cases)
    while low < high:  # the estimate grows with the cases: bisect the longest prefix
        mid = (low + high + 1) // 2
        calls, cost = estimate(plan.cases[:mid])
        fits = (budget.calls is None or calls <= budget.calls) and (
            budget.cost_usd is None or cost <= budget.cost_usd
        )
        low, high = (mid, high) if fits else (low, mid - 1)
    plan.over_budget = len(plan.cases) - low
    del plan.cases[low:]


def write_pass_test_set(folder: Path, cases: Sequence[TestCase], stamp: datetime) -> Path:
    """The pass's cases as a native JSONL test set (written whole or not at all)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"pass-{stamp:%Y%m%dT%H%M%S}.jsonl"
    lines = (case.model_dump_json(exclude_defaults=True) + "\n" for case in cases)
    atomic_write_text(path, "".join(lines))
    return path


@contextlib.contextmanager
def pass_lock(folder: Path) -> Iterator[None]:
    """Hold the series' monitor lock for one pass; ``MonitorError`` naming the holder when
    another pass has it (two passes would score the same new traces twice)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "pass.lock"
    handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held for the whole pass
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise MonitorError(f"a monitor pass of this series is running ({holder})") from None
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps({"host": socket.gethostname(), "pid": os.getpid()}))
        handle.flush()
        yield
    finally:
        handle.close()
