"""``evalhouse check RUN_ID``: the CI gate; exit 1 when a threshold fails."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalhouse import argtypes, home
from evalhouse.console import EXIT_FAILED, EXIT_OK, UsageError, err


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``check`` subcommand and its flags."""
    p = sub.add_parser(
        "check", parents=[home.home_options()], help="CI gate: exit 1 when a threshold fails"
    )
    p.add_argument("run_id")
    p.add_argument("--baseline", metavar="RUN_ID", help="compare per sample with this run")
    p.add_argument(
        "--min", action="append", default=[], metavar="METRIC=VALUE", help="metric mean floor"
    )
    p.add_argument(
        "--max", action="append", default=[], metavar="METRIC=VALUE", help="metric mean ceiling"
    )
    p.add_argument("--max-regressions", type=argtypes.count(0), help="samples allowed to regress")
    p.add_argument(
        "--tolerance", type=argtypes.points, default=5.0, help="points a sample may drop (0..100)"
    )
    p.add_argument("--candidate", help="check one candidate of a multi-candidate run")
    p.add_argument("--format", choices=["table", "junit"], default="table")
    p.add_argument("--output", type=Path, help="JUnit file (default evalhouse-check-RUN.xml)")
    p.set_defaults(func=run)


def _refuse_bad_usage(args: argparse.Namespace) -> None:
    """Refusals that need no warehouse."""
    if args.max_regressions is not None and not args.baseline:
        raise UsageError("--max-regressions needs --baseline RUN_ID")
    if not args.run_id.strip():
        raise UsageError("RUN_ID is empty (evalhouse sql 'SELECT run_id FROM runs' lists them)")
    if args.baseline is not None and not args.baseline.strip():
        raise UsageError("--baseline is empty: give a run id")


def run(args: argparse.Namespace) -> int:
    """Evaluate the thresholds, print the table, write JUnit when asked."""
    paths = home.paths(args)
    from engine.gate import evaluate_gate, junit_xml, parse_threshold, render_table
    from warehouse import queries

    thresholds = [parse_threshold(t, "min") for t in args.min] + [
        parse_threshold(t, "max") for t in args.max
    ]
    _refuse_bad_usage(args)
    warehouse = queries.Warehouse(paths.warehouse, catalog=home.catalog())
    for run_id in filter(None, [args.run_id, args.baseline]):
        if not queries.run_exists(warehouse, run_id):
            raise UsageError(f"run {run_id!r} is not in the warehouse (did ingest run?)")
    if args.candidate is not None:
        known = queries.run_candidates(warehouse, args.run_id)
        if args.candidate not in known:
            shown = ", ".join(repr(c) for c in known if c) or "none (a single-lane run)"
            raise UsageError(
                f"--candidate {args.candidate!r}: run {args.run_id!r} has no such candidate "
                f"(its candidates: {shown})"
            )
    metrics = queries.check_metrics(warehouse, args.run_id, args.candidate)
    unknown = [t.metric for t in thresholds if t.metric not in metrics and ":" not in t.metric]
    if unknown:
        raise UsageError(
            f"unknown metric {unknown[0]!r} (metrics: {', '.join(sorted(metrics))}, "
            "grader:<id>, conversation:<metric>)"
        )
    max_regressions = args.max_regressions
    if args.baseline and not thresholds and max_regressions is None:
        # --baseline alone gates what it names: no sample may fall beyond the tolerance.
        max_regressions = 0
    if not thresholds and max_regressions is None:
        raise UsageError("nothing to check: give --min/--max METRIC=VALUE or --baseline RUN_ID")
    regressions = None
    if args.baseline:
        regressed = queries.check_regressions(
            warehouse, args.run_id, args.baseline, args.tolerance, args.candidate
        )
        regressions = regressed.height
    checks = evaluate_gate(
        metrics, thresholds, regressions=regressions, max_regressions=max_regressions
    )
    print(render_table(checks))
    if args.format == "junit":
        target = args.output or Path(f"evalhouse-check-{args.run_id}.xml")
        target.write_text(junit_xml(checks, suite=f"check {args.run_id}"), encoding="utf-8")
        err(f"JUnit report written to {target}")
    return EXIT_OK if all(c.passed for c in checks) else EXIT_FAILED
