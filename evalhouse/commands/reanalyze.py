"""``evalhouse reanalyze RUN --ground-truth FILE``: a run's stored answers scored again
against new ground truth, as a new run of the same series (no target call)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from evalhouse import home

if TYPE_CHECKING:
    from engine.settings import Paths
from evalhouse.console import err


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``reanalyze`` subcommand and its flags."""
    p = sub.add_parser(
        "reanalyze",
        parents=[home.home_options()],
        help="score a run's stored answers again against new ground truth",
    )
    p.add_argument("run_id", metavar="RUN_ID")
    p.add_argument(
        "--ground-truth",
        type=Path,
        required=True,
        metavar="FILE",
        help="a test set (any format) with the run's case ids and the new ground truth",
    )
    p.add_argument("--name", help="name of the new run (default: the old name, re-analysed)")
    p.add_argument("--estimate", action="store_true", help="print the estimate and stop")
    p.add_argument("--no-ingest", action="store_true")
    p.set_defaults(func=run)


def _series(paths: Paths, run_id: str) -> str | None:
    """The old run's series as the warehouse defines it (None without a warehouse)."""
    from warehouse.errors import WarehouseError
    from warehouse.queries import Warehouse

    warehouse = Warehouse(paths.warehouse, catalog=home.catalog())
    query = "SELECT series FROM run_series WHERE run_id = $run_id"
    try:
        frame = warehouse.sql(query, {"run_id": run_id}).frame
    except WarehouseError:
        return None
    return None if frame.is_empty() else str(frame["series"][0])


def run(args: argparse.Namespace) -> int:
    """Plan the re-analysis, then run it like ``evalhouse run`` with recorded answers."""
    paths = home.paths(args, writes=not args.estimate)
    from engine import runner
    from engine.progress import LineProgress
    from engine.reanalysis import plan_reanalysis
    from engine.testsets import load_test_set

    plan = plan_reanalysis(
        paths, args.run_id, args.ground_truth, name=args.name, series=_series(paths, args.run_id)
    )
    err(
        f"re-analysing {plan.cases} answers of run {args.run_id} against {args.ground_truth}"
        + (
            f" ({len(plan.missing)} of its cases are not in the new ground truth)"
            if plan.missing
            else ""
        )
    )
    test_set = load_test_set(plan.test_set)
    if args.estimate:
        print(runner.estimate_run(plan.config, test_set, lake=paths.lake).render())
        return 0

    def ingest_quietly() -> None:
        home.ingest_now(paths, quiet=True)  # a busy warehouse waits: the lake keeps records

    after_flush = None if args.no_ingest else ingest_quietly
    outcome = runner.run_evaluation(
        plan.config, paths, test_set=test_set, after_flush=after_flush, progress=LineProgress()
    )
    err(f"re-analysis {outcome.status}: {outcome.samples} samples, {outcome.errors} errors")
    print(outcome.run_id)
    return int(outcome.exit_code)
