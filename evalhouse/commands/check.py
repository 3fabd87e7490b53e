"""``evalhouse check RUN_ID``: the CI gate; exit 1 when a threshold fails."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from evalhouse import argtypes, home
from evalhouse.console import EXIT_FAILED, EXIT_OK, UsageError, err

if TYPE_CHECKING:
    from engine.gate import Change
    from warehouse.queries import Warehouse


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``check`` subcommand and its flags."""
    p = sub.add_parser(
        "check", parents=[home.home_options()], help="CI gate: exit 1 when a threshold fails"
    )
    p.add_argument("run_id")
    p.add_argument("--baseline", metavar="RUN_ID", help="compare per sample with this run")
    p.add_argument(
        "--min",
        action="append",
        default=[],
        metavar="METRIC=VALUE",
        help="metric floor, on the metric's own scale (accuracy 0-100, pass_rate 0-1, ...)",
    )
    p.add_argument(
        "--max",
        action="append",
        default=[],
        metavar="METRIC=VALUE",
        help="metric ceiling, on the metric's own scale",
    )
    p.add_argument(
        "--max-regressions",
        type=argtypes.count(0),
        help="samples allowed to regress, per regression metric (default with --baseline: 0)",
    )
    p.add_argument(
        "--regression-metric",
        action="append",
        default=[],
        metavar="METRIC",
        help="a metric regressions are counted on, as Compare counts them (repeatable; "
        "default: accuracy, completeness, attribution)",
    )
    p.add_argument(
        "--tolerance",
        type=argtypes.points,
        default=5.0,
        help="points a sample may drop, on the metric's 0-100 form (0..100)",
    )
    p.add_argument(
        "--require-all-required",
        action="store_true",
        help="fail when any sample misses (or contradicts) a claim of importance required, "
        "as the analyzer setting require_all_required: true fails the sample",
    )
    p.add_argument(
        "--fail-beyond-noise",
        action="store_true",
        help="fail when a regression metric's mean fell beyond noise against --baseline (the "
        "95%% interval of the change, a paired bootstrap over samples, lies below zero)",
    )
    p.add_argument("--candidate", help="check one candidate of a multi-candidate run")
    p.add_argument(
        "--format",
        choices=["table", "junit", "markdown"],
        default="table",
        help="table (default), junit (a JUnit XML file) or markdown (a pull-request comment: "
        "verdict, thresholds, regressions, worst samples); with $GITHUB_STEP_SUMMARY set the "
        "Markdown is also appended there, whatever the format",
    )
    p.add_argument(
        "--output",
        type=Path,
        help="JUnit file (default evalhouse-check-RUN.xml) or Markdown file (default: "
        "standard output); - for standard output",
    )
    p.set_defaults(func=run)


def _refuse_bad_usage(args: argparse.Namespace) -> None:
    """Refusals that need no warehouse (made first: a mistake is exit 2 even while the
    warehouse is down)."""
    if args.max_regressions is not None and not args.baseline:
        raise UsageError("--max-regressions needs --baseline RUN_ID")
    if args.regression_metric and not args.baseline:
        raise UsageError("--regression-metric needs --baseline RUN_ID")
    if args.fail_beyond_noise and not args.baseline:
        raise UsageError("--fail-beyond-noise needs --baseline RUN_ID")
    if not args.run_id.strip():
        raise UsageError("RUN_ID is empty (evalhouse sql 'SELECT run_id FROM runs' lists them)")
    if args.baseline is not None and not args.baseline.strip():
        raise UsageError("--baseline is empty: give a run id")
    if not args.min and not args.max and not args.baseline and not args.require_all_required:
        raise UsageError(
            "nothing to check: give --min/--max METRIC=VALUE, --require-all-required "
            "or --baseline RUN_ID"
        )


def _regression_metrics(args: argparse.Namespace) -> list[str]:
    """The metrics regressions are counted on: those Compare offers (``ALL_METRICS`` and
    ``grader:<id>``), the analyzer's by default."""
    from engine.models import ANALYZER_METRICS
    from warehouse.queries import ALL_METRICS, GRADER_PREFIX

    chosen = list(dict.fromkeys(args.regression_metric)) or list(ANALYZER_METRICS)
    for metric in chosen:
        grader = metric.startswith(GRADER_PREFIX) and len(metric) > len(GRADER_PREFIX)
        if metric not in ALL_METRICS and not grader:
            raise UsageError(
                f"--regression-metric {metric!r}: not a metric Compare counts "
                f"(metrics: {', '.join(ALL_METRICS)}, grader:<id>)"
            )
    return chosen


def regressed_samples(
    warehouse: Warehouse,
    run_id: str,
    baseline: str,
    *,
    metric: str,
    tolerance: float,
    candidate: str | None,
) -> int:
    """Samples of ``run_id`` whose ``metric`` fell by more than ``tolerance`` points against
    ``baseline``: the Regressed count of the Compare page for the same pair (one query,
    ``compare_counts``, so the two can never disagree)."""
    from warehouse import queries

    counts = queries.compare_counts(
        warehouse,
        run_id,
        baseline,
        metric=metric,
        tolerance=tolerance,
        candidate=candidate,
        baseline_candidate=candidate,
    )
    return int(counts["regressed"].sum()) if counts.height else 0


def metric_changes(
    warehouse: Warehouse, run_id: str, baseline: str, metrics: list[str], candidate: str | None
) -> dict[str, Change]:
    """Each metric's change against ``baseline`` with the 95% interval every page shows: the
    paired bootstrap over the samples both runs scored, each sample's iterations averaged."""
    from engine.gate import Change
    from warehouse.noise_queries import metric_sample_values, paired_change, paired_deltas

    changes = {}
    for metric in metrics:
        values = metric_sample_values(warehouse, [run_id, baseline], metric, candidate)
        deltas = paired_deltas(values, run_id, baseline)
        mean = float(deltas.mean()) if deltas.size else None
        changes[metric] = Change(mean, paired_change(values, run_id, baseline))
    return changes


def _grader_notes(warehouse: Warehouse, run_id: str, candidate: str | None) -> dict[str, str]:
    """What the grader summary says about graders that failed: a note on each failing
    grader's metric and on ``error_rate`` (grader failures count as errors)."""
    from warehouse import queries

    notes: dict[str, str] = {}
    failing = []
    for grader, results, errors in queries.grader_errors(warehouse, run_id, candidate):
        if not errors:
            continue
        every = "every result" if errors == results else f"{errors} of {results} results"
        notes[f"{queries.GRADER_PREFIX}{grader}"] = f"grader {grader!r} failed on {every}"
        failing.append(f"{grader!r} on {errors} of {results}")
    if failing:
        notes["error_rate"] = "grader failures count as errors: " + ", ".join(failing)
    return notes


def run(args: argparse.Namespace) -> int:
    """Evaluate the thresholds, print the table, write JUnit when asked."""
    paths = home.paths(args)
    from engine.gate import (
        check_scales,
        evaluate_gate,
        junit_xml,
        parse_threshold,
        render_changes,
        render_table,
    )
    from engine.models.metrics import gate_metric_names, is_gate_metric
    from warehouse import queries

    thresholds = [parse_threshold(t, "min") for t in args.min] + [
        parse_threshold(t, "max") for t in args.max
    ]
    _refuse_bad_usage(args)
    regression_metrics = _regression_metrics(args) if args.baseline else []
    unknown = [t for t in thresholds if not is_gate_metric(t.metric)]
    if unknown:
        raise UsageError(
            f"{unknown[0].flag}: unknown metric {unknown[0].metric!r} "
            f"(metrics: {gate_metric_names()})"
        )
    for warning in check_scales(thresholds):
        err(warning)
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
    max_regressions = args.max_regressions
    if args.baseline and max_regressions is None and (not thresholds or args.regression_metric):
        # --baseline alone gates what it names: no sample may fall beyond the tolerance.
        max_regressions = 0
    regressions: dict[str, int] = {}
    if args.baseline and max_regressions is not None:
        regressions = {
            metric: regressed_samples(
                warehouse,
                args.run_id,
                args.baseline,
                metric=metric,
                tolerance=args.tolerance,
                candidate=args.candidate,
            )
            for metric in regression_metrics
        }
    changes = (
        metric_changes(warehouse, args.run_id, args.baseline, regression_metrics, args.candidate)
        if args.baseline
        else {}
    )
    checks = evaluate_gate(
        metrics,
        thresholds,
        regressions=regressions,
        max_regressions=max_regressions,
        tolerance=args.tolerance,
        notes=_grader_notes(warehouse, args.run_id, args.candidate),
        required_missing=(
            queries.required_claims_missing(warehouse, args.run_id, args.candidate)
            if args.require_all_required
            else None
        ),
        changes=changes if args.fail_beyond_noise else None,
    )
    from engine.outputs import is_stdout, write_output
    from evalhouse.commands import check_summary

    markdown = None
    if check_summary.wanted(args):
        markdown = check_summary.build(
            args,
            warehouse,
            checks,
            regressions,
            regression_metrics,
            lambda metric: regressed_samples(
                warehouse,
                args.run_id,
                args.baseline,
                metric=metric,
                tolerance=args.tolerance,
                candidate=args.candidate,
            ),
            max_regressions,
            changes,
        )
    markdown_out = args.format == "markdown" and (args.output is None or is_stdout(args.output))
    # With the JUnit file or the Markdown on standard output, the table goes to the person.
    junit_out = args.format == "junit" and is_stdout(args.output)
    person = sys.stderr if junit_out or markdown_out else sys.stdout
    print(render_table(checks), file=person)
    if changes:
        print(render_changes(changes, args.baseline), file=person)
    if markdown is not None and args.format == "markdown":
        target_md = args.output or Path("-")
        write_output(target_md, markdown)
        if not is_stdout(target_md):
            err(f"Markdown summary written to {target_md}")
    if markdown is not None and (summary := check_summary.append_step_summary(markdown)):
        err(f"Markdown summary appended to {summary} ({check_summary.STEP_SUMMARY})")
    if args.format == "junit":
        target = args.output or Path(f"evalhouse-check-{args.run_id}.xml")
        write_output(target, junit_xml(checks, suite=f"check {args.run_id}"))
        err(f"JUnit report written to {'standard output' if is_stdout(target) else target}")
    return EXIT_OK if all(c.passed for c in checks) else EXIT_FAILED
