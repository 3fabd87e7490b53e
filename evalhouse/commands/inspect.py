"""``evalhouse inspect PATH``: a test set's format, cases and the metrics it can score."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalhouse import argtypes, config_file, home
from evalhouse.console import EXIT_OK, UsageError

if TYPE_CHECKING:
    from engine.models import AnalyzerConfig


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``inspect`` subcommand and its flags (``--home`` too: it reads no home, but
    every command takes it, so a script can pass it everywhere)."""
    p = sub.add_parser(
        "inspect",
        parents=[home.home_options()],
        help="show a test set's format, cases and scorable metrics",
    )
    p.add_argument("path", type=Path)
    p.add_argument("--map", action="append", default=[], metavar="COLUMN=FIELD")
    p.add_argument("--config", type=Path, help="run config whose map: and analyzer: sections apply")
    p.add_argument(
        "--limit", type=argtypes.count(0), default=20, help="cases and skipped rows listed"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Load the test set as a run would (column map included) and describe it with the
    analyzer settings the run would use."""
    from engine.testsets import load_test_set
    from engine.testsets.inspect import render_inspection

    config = config_file.with_column_map(config_file.config_file(args), args)
    test_set = load_test_set(Path(args.path), column_map=config.get("column_map", {}))
    print(render_inspection(test_set, limit=args.limit, config=_analyzer(config, args)))
    return EXIT_OK


def _analyzer(config: dict[str, Any], args: argparse.Namespace) -> AnalyzerConfig:
    """The ``analyzer:`` section of the run config (the defaults without one)."""
    from pydantic import ValidationError

    from engine.models import AnalyzerConfig

    try:
        return AnalyzerConfig.model_validate(config.get("analyzer") or {})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise UsageError(f"{args.config}: analyzer.{where}: {first['msg']}") from exc
