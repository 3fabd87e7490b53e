"""``evalhouse export RUN_ID --format F``: write a run in a peer tool's format."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evalhouse import home
from evalhouse.console import EXIT_OK, UsageError, err

FORMATS = ("ragas", "deepeval", "promptfoo", "jsonl", "csv")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``export`` subcommand and its flags."""
    p = sub.add_parser(
        "export", parents=[home.home_options()], help="write a run in a peer tool's format"
    )
    p.add_argument("run_id")
    p.add_argument("--format", required=True, choices=list(FORMATS))
    p.add_argument("--output", type=Path, help="file to write (default: standard output)")
    p.add_argument(
        "--candidate", default="", help="candidate lane to export (default: recorded/target)"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Read the run back, rebuild its cases, write the format (never half a file)."""
    paths = home.paths(args)
    from engine.testsets.export import export_items, export_text
    from warehouse.export import RunNotFound, read_run_export

    try:
        stored = read_run_export(
            paths.warehouse, args.run_id, args.candidate, catalog=home.catalog()
        )
    except RunNotFound as exc:
        raise UsageError(str(exc)) from exc
    items = export_items(
        stored.test_set, stored.test_set_hash, stored.config, stored.samples, stored.claims,
        warn=err, stored_cases=stored.cases,
    )  # fmt: skip
    csv_output = args.output is not None and args.output.suffix.lower() == ".csv"
    text = export_text(items, args.format, csv_output=csv_output)
    if args.output is None:
        sys.stdout.write(text)
        return EXIT_OK
    partial = args.output.with_name(args.output.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(args.output)  # nothing half-written under the final name
    err(f"exported {len(items)} samples of {args.run_id} as {args.format} to {args.output}")
    return EXIT_OK
