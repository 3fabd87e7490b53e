"""``evalhouse migrate --to CATALOG``: copy the warehouse file into a DuckLake catalog."""

from __future__ import annotations

import argparse
import os

from evalhouse import home
from evalhouse.console import EXIT_OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``migrate`` subcommand and its flags."""
    p = sub.add_parser(
        "migrate",
        parents=[home.home_options()],
        help="copy the warehouse file into a DuckLake catalog",
    )
    p.add_argument("--to", required=True, metavar="CATALOG", help="postgres:<libpq conninfo>")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Copy ``warehouse.duckdb`` into the (empty) DuckLake catalog of ``--to``."""
    from warehouse import ENV_CATALOG_DATA
    from warehouse.catalog import parse_catalog
    from warehouse.migrate import migrate

    # The source is the file; --to (with --catalog-data) names the target.
    data = getattr(args, "catalog_data", None) or os.environ.get(ENV_CATALOG_DATA)
    args.catalog = args.catalog_data = None
    paths = home.paths(args)
    target = parse_catalog(args.to, data, where="--to")
    counts = migrate(paths.warehouse, target)
    rows = ", ".join(f"{n} {t}" for t, n in sorted(counts.items()) if n)
    print(f"copied {paths.warehouse} into {target.label}: {rows or 'no rows'}")
    return EXIT_OK
