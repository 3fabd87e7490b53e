"""``evalhouse maintain``: compact a DuckLake catalog, expire old snapshots, delete unused
and orphaned files; once, or every ``--every`` until stopped (the operator's job: the
analysts' SQL refuses DuckLake's maintenance functions)."""

from __future__ import annotations

import argparse
import time

from evalhouse import argtypes, home
from evalhouse.console import EXIT_CANCELLED, EXIT_OK, UsageError, err


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``maintain`` subcommand and its flags."""
    from warehouse import FILE_GRACE_S, MIN_FILE_GRACE_S, SNAPSHOT_KEEP_S
    from warehouse.errors import LOCK_WAIT_S

    p = sub.add_parser(
        "maintain",
        parents=[home.home_options()],
        help="compact the DuckLake catalog: merge small files, expire snapshots, delete orphans",
    )
    p.add_argument(
        "--keep",
        type=argtypes.duration,
        default=SNAPSHOT_KEEP_S,
        help="snapshots older than this expire, ending time travel to them (default 7d)",
    )
    p.add_argument(
        "--grace",
        type=argtypes.duration,
        default=FILE_GRACE_S,
        help="unused or orphaned files older than this are deleted (default 1h: longer than "
        f"an ingest takes to commit the files it writes; at least {MIN_FILE_GRACE_S / 60:g}m "
        "unless --force-grace)",
    )
    p.add_argument(
        "--force-grace",
        action="store_true",
        help="take a --grace shorter than the floor: only when no ingest writes to the catalog "
        "(a shorter grace may delete files an ingest in flight has not committed yet)",
    )
    p.add_argument(
        "--wait",
        type=argtypes.seconds,
        default=LOCK_WAIT_S,
        help="seconds to wait for the catalog's commit lock, which compaction holds so that "
        f"no ingest commits meanwhile (default {LOCK_WAIT_S:g}; says who holds it while "
        "waiting, then exit 3)",
    )
    p.add_argument(
        "--every",
        type=argtypes.duration,
        default=None,
        help="run again after this long (e.g. 1h), until stopped; a failed round is reported "
        "and the next one still runs",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Maintain the catalog once, or every ``--every`` until Ctrl-C (exit 130)."""
    from warehouse import MIN_FILE_GRACE_S
    from warehouse.maintenance import maintain

    if args.grace < MIN_FILE_GRACE_S and not args.force_grace:
        raise UsageError(
            f"--grace {args.grace:g}s: under {MIN_FILE_GRACE_S:g} s it may delete files an "
            "ingest in flight wrote and has not committed yet; add --force-grace when no "
            "ingest writes to this catalog"
        )
    home.paths(args)
    catalog = home.catalog()
    if catalog is None:
        raise UsageError(
            "maintain works on a DuckLake catalog (--catalog postgres:... or "
            "EVALHOUSE_CATALOG); the warehouse file needs none"
        )
    if args.every is None:
        print(
            maintain(
                catalog, keep_s=args.keep, grace_s=args.grace, wait_s=args.wait, on_message=err
            ).line()
        )
        return EXIT_OK
    if args.every <= 0:
        raise UsageError("--every must be longer than 0")
    try:
        while True:
            _round(catalog, args)
            time.sleep(args.every)
    except KeyboardInterrupt:
        return EXIT_CANCELLED


def _round(catalog: object, args: argparse.Namespace) -> None:
    """One scheduled round: its line, or its error in one line (the schedule goes on: a
    catalog that is down now may be up at the next round)."""
    from warehouse.catalog import Catalog
    from warehouse.errors import WarehouseError
    from warehouse.maintenance import maintain

    assert isinstance(catalog, Catalog)
    try:
        report = maintain(
            catalog, keep_s=args.keep, grace_s=args.grace, wait_s=args.wait, on_message=err
        )
        print(report.line(), flush=True)
    except WarehouseError as exc:
        err(f"{exc.title}: {exc} (next round in {args.every:.0f} s)")
