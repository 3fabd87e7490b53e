"""Ingest in the background after a review is saved, so it counts at once.

A review is a lake record (the dashboard never writes the warehouse); it used to reach Judge
agreement and the review queue only when someone clicked "Ingest now". Now every save asks
for an ingest: one ``evalhouse ingest`` process per home at a time, on a thread of the
server, and when saves arrive while one runs, exactly one more after it (ingest is
incremental and idempotent, so one later pass loads them all). The next page run sees the
new data version and shows the review.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from engine.processes import evalhouse_command, run_captured

INGEST_TIMEOUT_S = 120.0
"""Longest a background ingest may run before it is given up (the lake keeps the records:
the next save or "Ingest now" loads them)."""


@dataclass
class _State:
    running: bool = False
    again: bool = False
    last: tuple[int | None, str] | None = None
    """Exit code and last line of the latest finished ingest."""
    idle: threading.Event = field(default_factory=threading.Event)


_LOCK = threading.Lock()
_HOMES: dict[Path, _State] = {}


def _state(home: Path) -> _State:
    state = _HOMES.get(home)
    if state is None:
        state = _HOMES[home] = _State()
        state.idle.set()
    return state


def request_ingest(home: Path) -> None:
    """Ask for an ingest of ``home`` in the background; returns at once."""
    with _LOCK:
        state = _state(home)
        if state.running:
            state.again = True
            return
        state.running = True
        state.idle.clear()
    threading.Thread(target=_loop, args=(home, state), name="evalhouse-ingest", daemon=True).start()


def _loop(home: Path, state: _State) -> None:
    while True:
        try:
            code, out, err = run_captured(
                [*evalhouse_command(), "ingest", "--home", str(home)], INGEST_TIMEOUT_S
            )
            lines = (out or err or "").strip().splitlines()
            outcome: tuple[int | None, str] = (code, lines[-1] if lines else "")
        except OSError as exc:
            outcome = (None, f"did not start: {exc}")
        with _LOCK:
            state.last = outcome
            if not state.again:
                state.running = False
                state.idle.set()
                return
            state.again = False


def last_outcome(home: Path) -> tuple[int | None, str] | None:
    """Exit code and last line of the latest background ingest of ``home`` (None before
    the first); a failure is shown next to "Ingest now"."""
    with _LOCK:
        return _state(home).last


def wait_idle(home: Path, timeout_s: float = INGEST_TIMEOUT_S) -> bool:
    """Wait until no background ingest of ``home`` runs; True when none does."""
    with _LOCK:
        idle = _state(home).idle
    return idle.wait(timeout_s)
