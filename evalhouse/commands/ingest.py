"""``evalhouse ingest``: load new lake files into the warehouse."""

from __future__ import annotations

import argparse

from evalhouse import argtypes, home
from evalhouse.console import EXIT_OK
from warehouse.errors import LOCK_WAIT_S


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``ingest`` subcommand and its flags."""
    p = sub.add_parser(
        "ingest", parents=[home.home_options()], help="load new lake files into the warehouse"
    )
    p.add_argument("--rebuild", action="store_true", help="recreate the warehouse from the lake")
    p.add_argument(
        "--wait",
        type=argtypes.seconds,
        default=LOCK_WAIT_S,
        help="seconds to wait for the lock: the warehouse file's, or a catalog's commit lock "
        f"(default {LOCK_WAIT_S:g}; then exit 3 naming the holder)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Ingest, print the headline, warn about corrupt parts."""
    paths = home.paths(args, writes=True)
    from ingest import ingest

    report = ingest(paths, rebuild=args.rebuild, wait_s=args.wait, catalog=home.catalog())
    print(report.headline())
    home.report_corrupt(report)
    return EXIT_OK
