"""The ``evalhouse`` command: the composition root that wires engine, ingest and warehouse.

The parser is built from ``commands.COMMANDS`` (one module per command); this module holds
what every command shares: the top-level flags and the one ladder that turns an error a
person can act on into one line without a traceback and an exit code: 0 ok, 1 a run
finished with too many failed samples (or a check failed), 2 bad input or an environment
problem the user can fix, 3 the warehouse or catalog is unavailable (an outage), 130
cancelled.
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Sequence
from typing import NoReturn

from evalhouse import __version__, home
from evalhouse.argtypes import Parser
from evalhouse.console import (
    EXIT_UNAVAILABLE,
    EXIT_USAGE,
    UsageError,
    broken_pipe,
    err,
    reason,
)

# Re-exported: callers of the command's pieces find them where they always were.
from evalhouse.home import ingest_now
from evalhouse.processes import dashboard_command, serve_child

__all__ = ["build_parser", "console_main", "dashboard_command", "ingest_now", "main", "serve_child"]

LOADS_PANDAS = frozenset({"evalhouse.commands.report"})
"""Commands that draw with the dashboard's code in their own process (Streamlit may load pandas);
every other command runs with pandas refused (``evalhouse.pandas_free``)."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    from evalhouse.commands import COMMANDS

    parser = Parser(prog="evalhouse", description="Evaluate AI answers against ground truth.")
    parser.add_argument("--version", action="version", version=f"evalhouse {__version__}")
    # Accepted before or after the subcommand.
    home.add_home_options(parser)
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``evalhouse`` console script."""
    from pydantic import ValidationError

    from engine.errors import InputError
    from engine.secrets import mask_text
    from evalhouse.pandas_free import pandas_refused
    from evalhouse.run_options import validation_line
    from warehouse.errors import WarehouseError, WarehouseUnavailable

    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a one-line usage refusal
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    try:
        with pandas_refused(args.func.__module__ not in LOADS_PANDAS):
            return int(args.func(args))
    except WarehouseError as exc:
        # One line, with any connection string or password masked: CI logs are shared.
        err(mask_text(" ".join(f"{exc.title}: {exc}".split())))
        if isinstance(exc, WarehouseUnavailable):
            return EXIT_UNAVAILABLE
        return EXIT_USAGE
    except UsageError as exc:
        err(f"error: {exc}")
        return EXIT_USAGE
    except ValidationError as exc:
        err(f"error: {validation_line(exc)}")
        return EXIT_USAGE
    except InputError as exc:
        err(f"error: {exc}")
        return EXIT_USAGE
    except BrokenPipeError:
        return broken_pipe()
    except FileNotFoundError as exc:
        err(f"error: {exc.filename or exc}: no such file")
        return EXIT_USAGE
    except OSError as exc:
        # The file system refused (disk full, read-only, permissions): the user can fix it.
        where = f"{exc.filename}: " if exc.filename else ""
        err(f"error: {where}{reason(exc)}")
        return EXIT_USAGE


def console_main() -> NoReturn:
    """The ``evalhouse`` command (and ``python -m evalhouse.cli``): ``main`` and exit.

    Every object still alive is moved out of the garbage collector's reach first: at exit the
    interpreter otherwise walks them all once more (0.3 s after a 500-sample run) only to
    find what it frees anyway. ``atexit`` handlers and thread shutdown still run, and every
    file a command writes is closed by then. Not in ``main``, which tests call in-process.
    """
    try:
        code = main()
        sys.stdout.flush()  # here, where a reader that went away is caught, not at exit
    except BrokenPipeError:
        code = broken_pipe()
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":
    console_main()
