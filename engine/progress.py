"""Progress of a run: what the person watching sees, and the spec's ``.progress.json``.

``ProgressSink`` is what the runner reports to. ``TerminalProgress`` redraws one line
(bar, samples/s, ETA, cost so far) with ``\\r`` on a terminal; ``LineProgress`` prints a
plain line every few seconds for logs and pipes (the dashboard reads these).
``choose_progress`` picks one by whether the stream is a tty.

``write_progress_file`` keeps the answer-synthesis spec's per-iteration
``iteration-N/.progress.json`` (testSetName, iterationNumber, lastUpdated, statistics,
entries with hash/queryLogId/question/completedAt/result), written atomically. It
mirrors the lake, which stays the source of truth for resume.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, TextIO, runtime_checkable


@runtime_checkable
class ProgressSink(Protocol):
    """Receives progress updates and messages from the runner."""

    def update(
        self, done: int, total: int, cost_usd: float, samples_per_s: float, eta_s: float | None
    ) -> None:
        """``done`` of ``total`` samples (all iterations), cost so far, rate and ETA."""
        ...

    def message(self, text: str) -> None:
        """A line worth showing (warnings, iteration ends, ingest reports)."""
        ...


def _eta(seconds: float | None) -> str:
    if seconds is None or seconds != seconds or seconds == float("inf"):
        return "--:--"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


def render_line(
    done: int, total: int, cost_usd: float, samples_per_s: float, eta_s: float | None, width: int
) -> str:
    """The one-line status: ``[####....] 120/1000 12.0% 3.4/s ETA 04:18 $0.0123``."""
    frac = done / total if total else 1.0
    filled = round(frac * width)
    bar = "#" * filled + "." * (width - filled)
    return (
        f"[{bar}] {done}/{total} {frac * 100:5.1f}% {samples_per_s:.1f}/s "
        f"ETA {_eta(eta_s)} ${cost_usd:.4f}"
    )


class TerminalProgress:
    """A one-line bar redrawn in place with ``\\r`` (for a terminal)."""

    def __init__(self, stream: TextIO | None = None, width: int = 30, min_interval_s: float = 0.1):
        self.stream = stream or sys.stderr
        self.width = width
        self.min_interval_s = min_interval_s
        self._last = 0.0
        self._line = ""

    def update(
        self, done: int, total: int, cost_usd: float, samples_per_s: float, eta_s: float | None
    ) -> None:
        """Redraw the bar (throttled, except for the final update)."""
        now = time.monotonic()
        if done < total and now - self._last < self.min_interval_s:
            return
        self._last = now
        line = render_line(done, total, cost_usd, samples_per_s, eta_s, self.width)
        pad = " " * max(0, len(self._line) - len(line))
        self._line = line
        self.stream.write(f"\r{line}{pad}")
        if done >= total:
            self.stream.write("\n")
            self._line = ""
        self.stream.flush()

    def message(self, text: str) -> None:
        """Print above the bar, then redraw it."""
        if self._line:
            self.stream.write("\r" + " " * len(self._line) + "\r")
        self.stream.write(text + "\n")
        if self._line:
            self.stream.write(self._line)
        self.stream.flush()


class LineProgress:
    """Plain progress lines every ``interval_s`` seconds (logs, pipes, the dashboard)."""

    def __init__(self, stream: TextIO | None = None, interval_s: float = 5.0):
        self.stream = stream or sys.stderr
        self.interval_s = interval_s
        self._last: float | None = None

    def update(
        self, done: int, total: int, cost_usd: float, samples_per_s: float, eta_s: float | None
    ) -> None:
        """Print a line at most every ``interval_s`` seconds, and always the last one."""
        now = time.monotonic()
        if done < total and self._last is not None and now - self._last < self.interval_s:
            return
        self._last = now
        pct = done / total * 100 if total else 100.0
        self.stream.write(
            f"progress {done}/{total} ({pct:.1f}%) {samples_per_s:.1f} samples/s "
            f"eta {_eta(eta_s)} cost ${cost_usd:.4f}\n"
        )
        self.stream.flush()

    def message(self, text: str) -> None:
        """Print the message as its own line."""
        self.stream.write(text + "\n")
        self.stream.flush()


@dataclass
class NullProgress:
    """Keeps the messages (for tests and library callers); prints nothing."""

    messages: list[str] = field(default_factory=list)
    last: tuple[int, int, float, float, float | None] | None = None

    def update(
        self, done: int, total: int, cost_usd: float, samples_per_s: float, eta_s: float | None
    ) -> None:
        """Remember the latest update."""
        self.last = (done, total, cost_usd, samples_per_s, eta_s)

    def message(self, text: str) -> None:
        """Remember the message."""
        self.messages.append(text)


def choose_progress(stream: TextIO | None = None) -> ProgressSink:
    """``TerminalProgress`` when ``stream`` (default stderr) is a tty, else ``LineProgress``."""
    stream = stream or sys.stderr
    isatty = getattr(stream, "isatty", None)
    return TerminalProgress(stream) if isatty is not None and isatty() else LineProgress(stream)


# ----------------------------------------------------------------------------- .progress.json


@dataclass(frozen=True)
class ProgressEntry:
    """One completed sample of an iteration, as the spec's progress file lists it."""

    hash: str
    query_log_id: str
    question: str
    completed_at: datetime
    result: dict[str, Any]


def _iso(when: datetime) -> str:
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def progress_file_path(progress_root: Path, run_id: str, iteration: int) -> Path:
    """``<progress>/<run_id>/iteration-N/.progress.json``."""
    return progress_root / run_id / f"iteration-{iteration}" / ".progress.json"


def write_progress_file(
    path: Path,
    *,
    test_set_name: str,
    iteration: int,
    total: int,
    entries: Sequence[ProgressEntry],
) -> None:
    """Write the spec's progress document atomically (temporary file, fsync, rename)."""
    completed = len(entries)
    doc = {
        "testSetName": test_set_name,
        "iterationNumber": iteration,
        "lastUpdated": _iso(datetime.now(UTC)),
        "statistics": {
            "totalQuestions": total,
            "completedQuestions": completed,
            "pendingQuestions": max(0, total - completed),
            "completionPercentage": round(completed / total * 100, 2) if total else 100.0,
        },
        "entries": [
            {
                "hash": e.hash,
                "queryLogId": e.query_log_id,
                "question": e.question,
                "completedAt": _iso(e.completed_at),
                "result": e.result,
            }
            for e in entries
        ],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    # Unique per write, not per process: two writers in one process (threads, two runs)
    # must never share a temporary name.
    token = f"{os.getpid()}.{threading.get_ident()}.{uuid.uuid4().hex}"
    tmp = path.with_name(f".{path.name}.{token}.tmp")
    try:
        # json.dumps without indent runs the C encoder (json.dump, or any indent, runs the
        # pure-Python one: seconds per write on a 100k-sample iteration).
        data = json.dumps(doc, ensure_ascii=False).encode("utf-8")
        with open(tmp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)  # gone after the replace; left only by a failed write
