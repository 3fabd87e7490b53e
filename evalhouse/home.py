"""Where a command's data lives: the home folder (``--home`` or ``$EVALHOUSE_HOME``), the
warehouse catalog (the file, or DuckLake with ``--catalog``), and ingesting into it.

Children (the dashboard, runs it launches) find the same home and catalog through the
environment, so every command puts what it resolved there.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from typing import TYPE_CHECKING

from engine.settings import Paths, resolve_paths
from evalhouse.console import UsageError, err, reason

if TYPE_CHECKING:
    from ingest import IngestReport
    from warehouse.catalog import Catalog

HOME_HELP = "data folder (default $EVALHOUSE_HOME or ./evalhouse-data)"
CATALOG_HELP = "DuckLake catalog postgres:<libpq conninfo> instead of warehouse.duckdb"
DATA_HELP = (
    "shared folder of the catalog's Parquet files, or s3://BUCKET/PREFIX (or "
    "$EVALHOUSE_CATALOG_DATA; docs/team-scale.md)"
)


def add_home_options(parser: argparse.ArgumentParser, *, default: object = None) -> None:
    """``--home``, ``--catalog`` and ``--catalog-data``. The top-level parser defaults them
    to None; a subcommand's copy uses ``argparse.SUPPRESS`` so that a subcommand not given
    ``--home`` keeps the value given before it."""
    parser.add_argument("--home", default=default, help=HOME_HELP)
    parser.add_argument("--catalog", default=default, help=CATALOG_HELP)
    parser.add_argument("--catalog-data", default=default, metavar="DIR", help=DATA_HELP)


def home_options() -> argparse.ArgumentParser:
    """The parent parser of every subcommand that works on a home."""
    parser = argparse.ArgumentParser(add_help=False)
    add_home_options(parser, default=argparse.SUPPRESS)
    return parser


def paths(args: argparse.Namespace, *, writes: bool = False) -> Paths:
    """The home of ``--home`` (or ``$EVALHOUSE_HOME``); refused in one line when it is not
    a folder, or, for a command that ``writes``, when its folders cannot be written."""
    given = "--home" if getattr(args, "home", None) is not None else "EVALHOUSE_HOME"
    found = resolve_paths(getattr(args, "home", None))
    home = found.home
    if home.exists() and not home.is_dir():
        raise UsageError(f"{given} {home}: not a folder")
    if writes:
        try:
            for folder in (found.lake, found.progress, found.cache):
                folder.mkdir(parents=True, exist_ok=True)
            # A read-only file system keeps existing folders: only a write tells.
            fd, probe = tempfile.mkstemp(dir=home, prefix=".write-check-")
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            raise UsageError(f"{given} {home}: cannot write there ({reason(exc)})") from exc
    os.environ["EVALHOUSE_HOME"] = str(home)  # children (dashboard, runs) see the same home
    export_catalog(args)
    return found


def export_catalog(args: argparse.Namespace) -> None:
    """Check ``--catalog`` / ``--catalog-data`` (else the environment's) and put them in the
    environment, where ingest, the dashboard and the runs it launches find them."""
    from warehouse import ENV_CATALOG, ENV_CATALOG_DATA

    given, data = getattr(args, "catalog", None), getattr(args, "catalog_data", None)
    if given is None and data is None and not os.environ.get(ENV_CATALOG, "").strip():
        return  # the file warehouse: no need to load DuckDB (0.4 s) to say so
    from warehouse.catalog import catalog_from_env, parse_catalog

    if given is not None:
        if data is None:
            data = os.environ.get(ENV_CATALOG_DATA)
        parse_catalog(given, data, where="--catalog")
        os.environ[ENV_CATALOG] = given
        os.environ[ENV_CATALOG_DATA] = str(data)
    elif data is not None:
        if not os.environ.get(ENV_CATALOG, "").strip():
            raise UsageError("--catalog-data needs --catalog postgres:... (or EVALHOUSE_CATALOG)")
        os.environ[ENV_CATALOG_DATA] = str(data)
    catalog_from_env()  # a bad EVALHOUSE_CATALOG is refused here, in one line


def catalog() -> Catalog | None:
    """The DuckLake catalog the command works on, or None for the file."""
    from warehouse.catalog import catalog_from_env

    return catalog_from_env()


def ingest_now(found: Paths, *, rebuild: bool = False, quiet: bool = False) -> bool:
    """Ingest the lake; a busy warehouse is reported, not fatal (the lake keeps records)."""
    from ingest import ingest
    from warehouse.errors import WarehouseBusy

    try:
        report = ingest(
            found, rebuild=rebuild, on_message=None if quiet else err, catalog=catalog()
        )
    except WarehouseBusy as exc:
        err(f"ingest postponed: {exc}")
        return False
    if not quiet:
        err(report.headline())
    for line in report.interrupted_lines():  # said even by a quiet ingest: a person acts on it
        err(line)
    report_corrupt(report)
    return True


def report_corrupt(report: IngestReport) -> None:
    """The parts this ingest skipped as corrupt, on standard error, with their count."""
    if report.corrupt:
        err(f"warning: skipped {len(report.corrupt)} corrupt lake part(s); they stay unloaded")
        for line in report.corrupt_lines():
            err(line)
