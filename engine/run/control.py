"""Pausing a running run from outside it: a control file in the home.

A file, not a signal: the dashboard, another terminal or a script on another machine that
shares the home can pause a run without knowing its process, and a pause outlives nothing
(a run that ends removes its file). While the file exists the run starts no new sample;
the samples in flight finish and are published, and the run's state reads ``paused``.
"""

from __future__ import annotations

import re
from pathlib import Path

from engine.settings import Paths

_RUN_ID = re.compile(r"^[A-Za-z0-9._-]+$")
POLL_S = 0.5
"""How often a run looks for its control file."""


def pause_file(paths: Paths, run_id: str) -> Path:
    """The file whose presence pauses ``run_id``."""
    if not _RUN_ID.match(run_id):
        raise ValueError(f"run id {run_id!r} may hold only letters, digits, '.', '_' and '-'")
    return paths.home / "control" / f"{run_id}.pause"


def request_pause(paths: Paths, run_id: str) -> None:
    """Ask ``run_id`` to pause (it does within ``POLL_S`` and what is in flight)."""
    path = pause_file(paths, run_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()


def request_continue(paths: Paths, run_id: str) -> None:
    """Let a paused ``run_id`` go on."""
    pause_file(paths, run_id).unlink(missing_ok=True)


def pause_requested(paths: Paths, run_id: str) -> bool:
    """Whether ``run_id`` is asked to pause."""
    return pause_file(paths, run_id).exists()
