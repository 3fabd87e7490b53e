"""Judge drift from the command line: the automatic check after a run whose judge differs
from its baseline's, and the pieces ``evalhouse drift`` shares with it.

The series and baseline are the warehouse's (view ``run_series``, the one definition), so
both need the run ingested; the anchors and the re-judging are ``engine.drift``'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalhouse import home
from evalhouse.console import err

if TYPE_CHECKING:
    from engine.drift import DriftCheck
    from engine.settings import Paths


def check_run_drift(paths: Paths, run_id: str) -> DriftCheck | None:
    """When ``run_id``'s judge (judge@prompt version) differs from its baseline's: re-judge
    the series' anchors, record and print the drift. None when the judge did not change,
    the run has no baseline, or the warehouse cannot tell."""
    from engine.clock import utcnow
    from engine.drift import JudgeSide, anchor_set, check_drift, render, run_config
    from engine.errors import InputError
    from warehouse.drift_queries import drift_run_series
    from warehouse.errors import WarehouseError
    from warehouse.queries import Warehouse

    home.ingest_now(paths, quiet=True)
    try:
        judges = drift_run_series(Warehouse(paths.warehouse, catalog=home.catalog()), run_id)
    except WarehouseError as exc:
        err(f"judge drift not checked: {exc}")
        return None
    baseline = None if judges is None else judges["baseline_run_id"]
    if judges is None or baseline is None or judges["judge"] == judges["baseline_judge"]:
        return None
    err(f"judge changed since run {baseline}: {judges['baseline_judge']} -> {judges['judge']}")
    try:
        anchors = anchor_set(paths, judges["series"], baseline, utcnow())
        check = check_drift(
            paths,
            anchors,
            JudgeSide(run_config(paths, baseline), baseline),
            JudgeSide(run_config(paths, run_id), run_id),
            now=utcnow(),
            run_id=run_id,
        )
    except InputError as exc:  # the run itself is done and recorded: report, do not fail it
        err(f"judge drift not checked: {exc}")
        return None
    err(render(check))
    home.ingest_now(paths, quiet=True)
    return check
