"""``evalhouse drift --series NAME [--judge SPEC] [--against RUN]``: re-judge a series'
frozen anchors with a new judge and report how far each metric moved (paired, 95%)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from evalhouse import home
from evalhouse.console import UsageError, err

if TYPE_CHECKING:
    import polars as pl


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``drift`` subcommand and its flags."""
    p = sub.add_parser(
        "drift",
        parents=[home.home_options()],
        help="measure a judge change on a series' frozen anchor answers",
    )
    p.add_argument("--series", required=True, metavar="NAME")
    p.add_argument(
        "--judge",
        metavar="SPEC",
        help="the new judge (local|openai:MODEL|...); default: the judge of the series' "
        "latest completed run",
    )
    p.add_argument(
        "--against",
        metavar="RUN",
        help="the run whose judge is the old one (default: the latest completed run, or with "
        "no --judge that run's baseline)",
    )
    p.set_defaults(func=run)


def _completed(runs: pl.DataFrame) -> list[str]:
    return [str(r) for r in runs.filter(runs["status"] == "completed")["run_id"]]


def _sides(args: argparse.Namespace, runs: pl.DataFrame) -> tuple[str, str | None, str | None]:
    """(old run, new run or None, new judge spec or None) from the flags and the series."""
    completed = _completed(runs)
    if not completed:
        raise UsageError(f"series {args.series!r} has no completed run")
    if args.judge:
        return args.against or completed[0], None, args.judge
    new = completed[0]
    baselines = dict(zip(runs["run_id"], runs["baseline_run_id"], strict=True))
    old = args.against or baselines.get(new)
    if old is None:
        raise UsageError(f"run {new} has no baseline to compare judges with: give --against RUN")
    return str(old), new, None


def run(args: argparse.Namespace) -> int:
    """Pick the two judges, re-judge the anchors (freezing them the first time), record the
    drift (lake table ``judge_drift``) and print it."""
    paths = home.paths(args, writes=True)
    from engine.clock import utcnow
    from engine.drift import JudgeSide, anchor_set, check_drift, render, run_config
    from warehouse.drift_queries import drift_series_runs
    from warehouse.queries import Warehouse

    home.ingest_now(paths, quiet=True)
    runs = drift_series_runs(Warehouse(paths.warehouse, catalog=home.catalog()), args.series)
    if runs.is_empty():
        raise UsageError(f"no run of series {args.series!r} in the warehouse")
    old, new_run, spec = _sides(args, runs)
    old_config = run_config(paths, old)
    if new_run is not None:
        new = JudgeSide(run_config(paths, new_run), new_run)
    else:
        new = JudgeSide(old_config.model_copy(update={"judge": spec}))
    anchors = anchor_set(paths, args.series, old, utcnow())
    check = check_drift(
        paths, anchors, JudgeSide(old_config, old), new, now=utcnow(), run_id=new_run
    )
    print(render(check))
    err(f"recorded as {check.check_id}")
    home.ingest_now(paths, quiet=True)
    return 0
