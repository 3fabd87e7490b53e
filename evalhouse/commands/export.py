"""``evalhouse export RUN_ID --format F``: write a run in a peer tool's format, or its
preference pairs for DPO (``--format dpo``; RUN_ID may be a ``compare-runs`` comparison)."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalhouse import home
from evalhouse.console import EXIT_OK, UsageError, err, out

FORMATS = ("ragas", "deepeval", "promptfoo", "jsonl", "csv", "dpo")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``export`` subcommand and its flags."""
    p = sub.add_parser(
        "export", parents=[home.home_options()], help="write a run in a peer tool's format"
    )
    p.add_argument("run_id")
    p.add_argument("--format", required=True, choices=list(FORMATS))
    p.add_argument("--output", type=Path, help="file to write ('-' or none: standard output)")
    p.add_argument(
        "--candidate", default="", help="candidate lane to export (default: recorded/target)"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Read the run back, rebuild its cases, write the format (never half a file)."""
    from engine.outputs import is_stdout
    from engine.testsets.export import unsupported_suffix

    if is_stdout(args.output):
        args.output = None
    if args.output is not None and (why := unsupported_suffix(args.format, args.output)):
        raise UsageError(why)
    paths = home.paths(args)
    if args.format == "dpo":
        return _dpo(args, paths.warehouse)
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
    _write(text, args.output, f"{len(items)} samples of {args.run_id} as {args.format}")
    return EXIT_OK


def _write(text: str, output: Path | None, what: str) -> None:
    from engine.outputs import write_output

    if output is None:
        out(text)
        return
    write_output(output, text)  # whole, or through a pipe or device as `>` would
    err(f"exported {what} to {output}")


def _dpo(args: argparse.Namespace, warehouse: Path) -> int:
    """Preference pairs of the run (or comparison); refused when it has none."""
    from engine.preferences import dpo_jsonl, preference_pairs
    from warehouse.preferences import read_preference_rows

    rows = read_preference_rows(warehouse, args.run_id, catalog=home.catalog())
    pairs = preference_pairs(rows.pairwise, rows.reviews)
    if not pairs:
        if not rows.known:
            raise UsageError(
                f"{args.run_id!r} is not a run or a comparison in the warehouse (did ingest run?)"
            )
        raise UsageError(
            f"run {args.run_id!r} has no preference pairs: no head-to-head judgment with a "
            "winner in both orders (evalhouse compare-runs RUN OTHER) and no two reviewed "
            "answers to one question with different labels"
        )
    judged = sum(p.origin == "pairwise" for p in pairs)
    what = f"{len(pairs)} preference pairs of {args.run_id} ({judged} judged, "
    _write(dpo_jsonl(pairs), args.output, what + f"{len(pairs) - judged} reviewed) as dpo")
    return EXIT_OK
