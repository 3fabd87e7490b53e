"""``evalhouse inspect PATH``: a test set's format, cases and the metrics it can score."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalhouse import argtypes, config_file
from evalhouse.console import EXIT_OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``inspect`` subcommand and its flags."""
    p = sub.add_parser("inspect", help="show a test set's format, cases and scorable metrics")
    p.add_argument("path", type=Path)
    p.add_argument("--map", action="append", default=[], metavar="COLUMN=FIELD")
    p.add_argument("--config", type=Path, help="run config whose map: section applies")
    p.add_argument(
        "--limit", type=argtypes.count(0), default=20, help="cases and skipped rows listed"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Load the test set as a run would (column map included) and describe it."""
    from engine.testsets import load_test_set
    from engine.testsets.inspect import render_inspection

    config = config_file.with_column_map(config_file.config_file(args), args)
    test_set = load_test_set(Path(args.path), column_map=config.get("column_map", {}))
    print(render_inspection(test_set, limit=args.limit))
    return EXIT_OK
