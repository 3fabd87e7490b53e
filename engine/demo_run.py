"""Build the demo lake: four weekly runs of the demo test sets through the real runner.

The runs are dated a week apart (the runner's clock is set to each week), scored by
the local analyzer and judge, so the demo shows exactly what a real run produces.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from engine.demo import build_weekly_test_sets
from engine.models import RunConfig
from engine.progress import LineProgress
from engine.runner import run_evaluation
from engine.settings import Paths
from engine.testsets import load_test_set


def _clock_from(start: datetime) -> Callable[[], datetime]:
    """A clock that starts at ``start`` and advances with real time."""
    offset = start - datetime.now()

    def now() -> datetime:
        return datetime.now() + offset

    return now


PROGRESS_FILE = "demo-progress.json"
"""In the home while the demo builds: ``{"done": k, "total": n}``; the dashboard reads it to
say that more runs are coming."""


def progress_path(paths: Paths) -> Path:
    """Where ``build_demo`` records how many of its runs have landed."""
    return paths.home / PROGRESS_FILE


def read_progress(paths: Paths) -> tuple[int, int] | None:
    """``(done, total)`` while a demo is being built, else None."""
    try:
        data = json.loads(progress_path(paths).read_text("utf-8"))
        return int(data["done"]), int(data["total"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_progress(paths: Paths, done: int, total: int) -> None:
    target = progress_path(paths)
    tmp = target.with_suffix(".tmp")
    tmp.write_text(json.dumps({"done": done, "total": total}), "utf-8")
    tmp.replace(target)  # atomic: the dashboard never reads half a file


def build_demo(
    paths: Paths,
    *,
    log: Callable[[str], None] = print,
    weeks: int = 4,
    after_run: Callable[[], object] | None = None,
) -> list[str]:
    """Write demo test sets under ``paths.test_sets`` and run each week; returns run ids.
    ``after_run`` is called after each run (the CLI ingests there, so runs land one by one
    in a dashboard that is already serving); ``PROGRESS_FILE`` says how many have landed
    until the last one has. A run cancelled by Ctrl-C or SIGTERM (the runner catches them)
    ends the demo with ``KeyboardInterrupt`` once that run's work is saved and ingested."""
    run_ids: list[str] = []
    weekly = build_weekly_test_sets(paths.test_sets, weeks=weeks)
    paths.home.mkdir(parents=True, exist_ok=True)
    _write_progress(paths, 0, len(weekly))
    try:
        run_ids = _run_weeks(paths, weekly, log, after_run)
    finally:
        progress_path(paths).unlink(missing_ok=True)
    return run_ids


DEMO_SERIES = "demo weekly"
"""The series of the demo's weekly runs."""


def _run_weeks(
    paths: Paths,
    weekly: list[tuple[str, Path, datetime]],
    log: Callable[[str], None],
    after_run: Callable[[], object] | None,
) -> list[str]:
    run_ids: list[str] = []
    for name, test_set_path, date in weekly:
        test_set = load_test_set(test_set_path)
        # The four weeks are one series: each week's baseline is the week before.
        config = RunConfig(
            name=name, series=DEMO_SERIES, test_set=str(test_set_path), concurrency=4
        )
        log(
            f"demo: running '{name}' ({len(test_set.cases)} samples, dated {date:%Y-%m-%d}), "
            f"run {len(run_ids) + 1} of {len(weekly)}"
        )
        outcome = run_evaluation(
            config,
            paths,
            test_set=test_set,
            progress=LineProgress(),
            clock=_clock_from(date + timedelta(hours=len(run_ids))),
        )
        run_ids.append(outcome.run_id)
        if after_run is not None:
            after_run()
        if outcome.status == "cancelled":
            # Ctrl-C or SIGTERM reached the runner's own handler: the person wants the demo
            # to stop, not the next week to start.
            log(f"demo: cancelled after {len(run_ids)} of {len(weekly)} runs")
            raise KeyboardInterrupt
        _write_progress(paths, len(run_ids), len(weekly))
        log(f"demo: run {len(run_ids)} of {len(weekly)} landed in the warehouse")
    return run_ids
