"""One module per ``evalhouse`` command: ``add_parser(subparsers)`` declares its flags and
``run(args) -> int`` does the work and returns the exit code. ``evalhouse.cli`` builds the
parser from ``COMMANDS`` in the order ``--help`` lists them."""

from __future__ import annotations

from evalhouse.commands import (
    candidates,
    check,
    compare_runs,
    dashboard,
    demo,
    drift,
    export,
    ingest,
    inspect,
    maintain,
    migrate,
    monitor,
    pause,
    reanalyze,
    report,
    run,
    sql,
    testset,
    traces,
)

COMMANDS = (
    demo,
    run,
    pause,
    reanalyze,
    drift,
    inspect,
    export,
    report,
    ingest,
    migrate,
    maintain,
    sql,
    check,
    testset,
    candidates,
    traces,
    monitor,
    compare_runs,
    dashboard,
)
"""The commands, in the order of ``evalhouse --help``."""
