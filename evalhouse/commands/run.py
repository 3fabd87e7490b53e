"""``evalhouse run``: evaluate a test set. The flags that set run options come from
``evalhouse.run_options`` (derived from ``RunConfig``); the ones here choose what to do
with the config: resume, estimate, ingest or not, which samples."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from evalhouse import alerting, drifting, home, run_options
from evalhouse.argtypes import Parser
from evalhouse.console import EXIT_OK, UsageError, err

if TYPE_CHECKING:
    from engine.models import RunConfig


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``run`` subcommand and its flags."""
    p = sub.add_parser("run", parents=[home.home_options()], help="evaluate a test set")
    assert isinstance(p, Parser)
    p.defer(_add_flags)
    p.set_defaults(func=run)


def _add_flags(p: argparse.ArgumentParser) -> None:
    run_options.add_run_flags(p)
    p.add_argument("--resume", metavar="RUN_ID")
    p.add_argument(
        "--estimate", action="store_true", help="print calls, tokens, cost, time; run nothing"
    )
    p.add_argument("--no-ingest", action="store_true")
    p.add_argument("--strict", action="store_true", help="refuse a test set with any bad row")
    p.add_argument("--only", help="comma-separated sample ids to evaluate")


def reference_free(config: RunConfig, series: str) -> RunConfig:
    """``config`` for scoring production traces: the series of the traces' service unless
    one is given, and no reference required (``AnalyzerConfig.require_reference``)."""
    analyzer = config.analyzer.model_copy(update={"require_reference": False})
    return config.model_copy(update={"series": config.series or series, "analyzer": analyzer})


def run(args: argparse.Namespace) -> int:
    """Check every input, then run (or estimate); the run id is the last line printed."""
    paths = home.paths(args)
    from engine import runner
    from engine.candidates.plan import check_run_files
    from engine.progress import LineProgress, TerminalProgress
    from engine.testsets import load_test_set

    config = run_options.run_config(args)
    rules = alerting.alert_rules(args)  # a bad rule refuses the run before it starts
    if config.executor == "ray" and not args.estimate:
        from engine.run.distributed import INSTALL_HINT, ray_available

        if not ray_available():
            raise UsageError(f"--ray: {INSTALL_HINT}")
    test_set = load_test_set(
        Path(config.test_set), strict=args.strict, column_map=config.column_map
    )
    if test_set.series:  # a trace file: production answers, no reference by nature
        config = reference_free(config, test_set.series)
    check_run_files(config)  # malformed files and unknown ids: exit 2 before anything runs
    if not args.estimate:
        # Only now, with every input accepted: a refused run leaves no folder behind.
        paths = home.paths(args, writes=True)
    err(f"test set: {test_set.format}, {len(test_set.cases)} cases")
    for problem in test_set.problems:
        err(f"skipped: {problem}")
    only = set(args.only.split(",")) if args.only else None
    if args.estimate:
        print(runner.estimate_run(config, test_set, only_sample_ids=only, lake=paths.lake).render())
        return EXIT_OK
    progress = TerminalProgress() if sys.stderr.isatty() else LineProgress()

    def ingest_quietly() -> None:
        home.ingest_now(paths, quiet=True)  # a busy warehouse waits: the lake keeps records

    after_flush = None if args.no_ingest else ingest_quietly
    outcome = runner.run_evaluation(
        config,
        paths,
        test_set=test_set,
        resume_run_id=args.resume,
        after_flush=after_flush,
        progress=progress,
        only_sample_ids=only,
        start_new_if_live=True,
    )
    err(
        f"run {outcome.status}: {outcome.samples} samples, {outcome.errors} errors, "
        f"${outcome.cost_usd:.4f}"
    )
    if rules and outcome.status != "cancelled" and not args.no_ingest:
        alerting.evaluate_alerts(paths, outcome.run_id, rules)
    if outcome.status == "completed" and not args.no_ingest:
        drifting.check_run_drift(paths, outcome.run_id)  # a judge change: how much is the judge's
    print(outcome.run_id)
    return int(outcome.exit_code)
