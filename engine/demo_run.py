"""Build the demo lake: four weekly runs of the demo test sets through the real runner.

The runs are dated a week apart (the runner's clock is set to each week), scored by
the local analyzer and judge, so the demo shows exactly what a real run produces.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

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


def build_demo(paths: Paths, *, log: Callable[[str], None] = print, weeks: int = 4) -> list[str]:
    """Write demo test sets under ``paths.test_sets`` and run each week; returns run ids."""
    run_ids: list[str] = []
    for name, test_set_path, date in build_weekly_test_sets(paths.test_sets, weeks=weeks):
        test_set = load_test_set(test_set_path)
        config = RunConfig(name=name, test_set=str(test_set_path), concurrency=4)
        log(f"demo: running '{name}' ({len(test_set.cases)} samples, dated {date:%Y-%m-%d})")
        outcome = run_evaluation(
            config,
            paths,
            test_set=test_set,
            progress=LineProgress(),
            clock=_clock_from(date + timedelta(hours=len(run_ids))),
        )
        run_ids.append(outcome.run_id)
    return run_ids
