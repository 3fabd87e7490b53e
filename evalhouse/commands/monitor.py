"""``evalhouse monitor PATH --series NAME``: score the production traces that arrive.

One pass (for cron), or a pass every ``--every`` until Ctrl-C. Each pass scores the traces
under PATH that no run of the series has scored (``engine.monitor``), within its budget,
as one run of the series, then evaluates the config's ``alerts:``. Exit codes for cron: 0
nothing wrong; 1 the run failed or an alert rule is firing; 2 bad input (or another pass
of the series holds the lock); 3 the warehouse is unavailable; 70 the pass crashed. With
``--every``, a pass that fails for any of these reasons is reported in one line and the
next one still runs (what failed now may work at the next pass).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from evalhouse import alerting, argtypes, home, run_options
from evalhouse.argtypes import Parser
from evalhouse.commands.run import reference_free
from evalhouse.commands.traces import expect
from evalhouse.console import (
    EXIT_CANCELLED,
    EXIT_CRASHED,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_UNAVAILABLE,
    EXIT_USAGE,
    UsageError,
    err,
)

if TYPE_CHECKING:
    from engine.alerts import AlertRule
    from engine.models import TestCase
    from engine.settings import Paths

MIN_EVERY_S = 10.0
"""Shortest time between passes: a pass reads the whole folder."""


def duration(text: str) -> float:
    """``30s``, ``5m``, ``1h``, ``1d`` in seconds (``argtypes.duration``), at least
    ``MIN_EVERY_S``."""
    seconds = argtypes.duration(text)
    if seconds < MIN_EVERY_S:
        raise argparse.ArgumentTypeError(f"{text!r}: at least {MIN_EVERY_S:.0f}s between passes")
    return seconds


def fraction(text: str) -> float:
    """``5%`` or ``0.05``: a fraction in (0, 1]."""
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a fraction such as 5% or 0.05") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r}: the sample must be above 0 and at most 100%")
    return value


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``monitor`` subcommand: its own flags and the run options of ``run``."""
    p = sub.add_parser(
        "monitor", parents=[home.home_options()], help="score new production traces, on a schedule"
    )
    assert isinstance(p, Parser)
    p.add_argument("path", type=Path, help="a trace file, or a folder the traces are exported to")
    p.defer(_add_flags)
    p.set_defaults(func=run)


def _add_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--every", type=duration, metavar="DURATION", help="a pass every 30s/5m/1h")
    p.add_argument("--sample", type=fraction, default=1.0, help="score this share: 5%% or 0.05")
    p.add_argument("--max-calls", type=int, metavar="N", help="judge and target calls per pass")
    p.add_argument(
        "--max-cost", type=argtypes.dollars, metavar="USD", help="estimated dollars per pass"
    )
    p.add_argument("--no-ingest", action="store_true")
    p.add_argument(
        "--expected",
        type=Path,
        metavar="TESTSET",
        help="test set whose cases give the expected tool calls (and reference) of traces "
        "with the same trace id or question",
    )
    run_options.add_run_flags(p)


def run(args: argparse.Namespace) -> int:
    """Passes until done (one without ``--every``); the last pass's exit code."""
    if args.test_set is not None or args.name is not None:
        raise UsageError("monitor names each pass's run and test set: drop --test-set/--name")
    if args.series is None:
        raise UsageError("--series NAME is required: the series the passes' runs belong to")
    for flag, value in (("--max-calls", args.max_calls), ("--max-cost", args.max_cost)):
        if value is not None and value < 0:
            raise UsageError(f"{flag} {value}: must be 0 or more")
    rules = alerting.alert_rules(args)
    paths = home.paths(args, writes=True)
    if args.every is None:
        return guarded_pass(args, paths, rules, raising=True)
    while True:
        code = guarded_pass(args, paths, rules, raising=False)
        if code == EXIT_CANCELLED:
            return code
        err(f"next pass in {args.every:.0f} s (Ctrl-C stops)")
        try:
            time.sleep(args.every)
        except KeyboardInterrupt:
            return EXIT_CANCELLED


def guarded_pass(
    args: argparse.Namespace, paths: Paths, rules: tuple[AlertRule, ...], *, raising: bool
) -> int:
    """One pass whose unexpected failure is one line and ``EXIT_CRASHED``, never the 1 of a
    firing alert; with ``raising`` a refusal (bad input, a held lock, an unavailable
    warehouse) goes to the CLI's own one-line handling, else it is reported here and the
    schedule goes on."""
    from engine.errors import InputError
    from engine.secrets import mask_text
    from warehouse.errors import WarehouseError, WarehouseUnavailable

    # A pass's run and test set are its own: the next pass must not inherit them.
    args.test_set = args.name = None
    try:
        return one_pass(args, paths, rules)
    except KeyboardInterrupt:
        return EXIT_CANCELLED
    except (InputError, UsageError, WarehouseError) as exc:
        if raising:
            raise
        err(f"pass failed: {mask_text(' '.join(str(exc).split()))}")
        return EXIT_UNAVAILABLE if isinstance(exc, WarehouseUnavailable) else EXIT_USAGE
    except Exception as exc:
        detail = mask_text(" ".join(str(exc).split()))[:300]
        err(f"pass crashed: {type(exc).__name__}: {detail} (exit {EXIT_CRASHED})")
        return EXIT_CRASHED


def one_pass(args: argparse.Namespace, paths: Paths, rules: tuple[AlertRule, ...]) -> int:
    """Read, select, score and alert once; see the module docstring for the exit code."""
    from engine import monitor, runner
    from engine.clock import utcnow
    from engine.progress import LineProgress
    from engine.testsets import load_test_set

    folder = monitor.monitor_dir(paths.home, args.series)
    with monitor.pass_lock(folder):
        plan = monitor.read_new_traces(args.path, args.series, paths.lake, args.sample)
        for problem in plan.problems:
            err(f"skipped: {problem}")
        if args.expected is not None:
            plan.cases = expect(args.expected, plan.cases)
        budget = monitor.Budget(calls=args.max_calls, cost_usd=args.max_cost)
        if plan.cases and (budget.calls is not None or budget.cost_usd is not None):
            monitor.within_budget(plan, budget, _estimator(args, paths))
        err(
            f"{plan.seen} traces: {plan.scored_before} scored before, {plan.not_sampled} not "
            f"in the sample, {plan.over_budget} over this pass's budget"
            + (f", {plan.files_waiting} files for the next pass" if plan.files_waiting else "")
            + f"; scoring {len(plan.cases)}"
        )
        if not plan.cases:
            return EXIT_OK
        stamp = utcnow()
        args.test_set = monitor.write_pass_test_set(folder, plan.cases, stamp)
        args.name = f"{args.series} {stamp:%Y-%m-%d %H:%M:%S}"
        config = reference_free(run_options.run_config(args), args.series)
        test_set = load_test_set(Path(config.test_set))

        def ingest_quietly() -> None:
            home.ingest_now(paths, quiet=True)

        outcome = runner.run_evaluation(
            config,
            paths,
            test_set=test_set,
            after_flush=None if args.no_ingest else ingest_quietly,
            progress=LineProgress(sys.stderr),
        )
    err(f"run {outcome.status}: {outcome.samples} samples, {outcome.errors} errors")
    print(outcome.run_id, flush=True)
    if outcome.status == "cancelled":
        return EXIT_CANCELLED
    firing = 0
    if rules and not args.no_ingest:
        firing = alerting.evaluate_alerts(paths, outcome.run_id, rules)
    return EXIT_FAILED if outcome.exit_code or firing else EXIT_OK


def _estimator(
    args: argparse.Namespace, paths: Paths
) -> Callable[[Sequence[TestCase]], tuple[int, float]]:
    """(calls, USD) of scoring a list of cases with the pass's run options."""
    from engine import runner
    from engine.testsets.base import LoadedTestSet

    args.test_set, args.name = Path("monitor-estimate.jsonl"), f"{args.series} estimate"
    config = run_options.run_config(args)
    args.test_set = args.name = None

    def estimate(cases: Sequence[TestCase]) -> tuple[int, float]:
        test_set = LoadedTestSet(
            path=Path(config.test_set), format="jsonl", sha256="", cases=tuple(cases)
        )
        got = runner.estimate_run(config, test_set, lake=paths.lake)
        return got.target_calls + got.judge_calls, got.cost_usd

    return estimate
