"""``evalhouse report RUN_ID``: the Overview of a run against its baseline as one HTML file
that opens offline (``dashboard.report``), for an email or a slide deck."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalhouse import home
from evalhouse.console import EXIT_OK, UsageError, err


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``report`` subcommand and its flags."""
    p = sub.add_parser(
        "report", parents=[home.home_options()], help="a run's Overview as one HTML file"
    )
    p.add_argument("run_id", metavar="RUN_ID")
    p.add_argument(
        "--baseline",
        metavar="RUN_ID",
        help="compare with this run ('none': no baseline; default: the series' baseline)",
    )
    p.add_argument(
        "--output",
        type=Path,
        help="file to write ('-': standard output; default report-RUN_ID.html)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Read the run and its baseline from the warehouse and write the report whole."""
    from streamlit.logger import set_log_level

    # The report reuses the pages' queries, which Streamlit caches: outside a server it
    # warns on every cache; nothing here is cached across runs anyway. Streamlit gives
    # each of its loggers its own level, so the parent logger's level would not reach
    # them: its own setter covers those made already and those made later.
    set_log_level("error")
    from dashboard.report import build_report
    from engine.clock import utcnow
    from engine.outputs import is_stdout, write_output
    from warehouse import queries as q
    from warehouse.queries import Warehouse

    paths = home.paths(args)
    warehouse = Warehouse(paths.warehouse, catalog=home.catalog())
    output = args.output or Path(f"report-{args.run_id}.html")
    with warehouse.session():
        baseline = args.baseline
        if baseline is None:
            baseline = q.baseline_run(warehouse, args.run_id)
        elif baseline.strip().lower() == "none":
            baseline = None
        try:
            text = build_report(warehouse, args.run_id, baseline, now=utcnow())
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    write_output(output, text)
    against = f"against {baseline}" if baseline else "without a baseline"
    where = "standard output" if is_stdout(output) else str(output)
    err(f"wrote {where} ({len(text.encode()):,} bytes): run {args.run_id} {against}")
    return EXIT_OK
