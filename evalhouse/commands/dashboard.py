"""``evalhouse dashboard``: serve the dashboard (loopback only unless ``--address``)."""

from __future__ import annotations

import argparse

from engine.settings import Paths
from evalhouse import argtypes, home
from evalhouse.console import UsageError
from evalhouse.processes import dashboard_command, serve_child


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``dashboard`` subcommand and its flags."""
    p = sub.add_parser("dashboard", parents=[home.home_options()], help="serve the dashboard")
    add_server_flags(p)
    p.set_defaults(func=run)


def add_server_flags(parser: argparse.ArgumentParser) -> None:
    """``--port``, ``--address``, ``--no-warmup`` and ``--health-port`` (also taken by
    ``demo``)."""
    parser.add_argument("--port", type=argtypes.port, default=8501)
    parser.add_argument(
        "--address", default="127.0.0.1", help="bind address (default loopback only)"
    )
    parser.add_argument(
        "--no-warmup",
        action="store_true",
        help="answer at once instead of first running every page's queries (then each "
        "page's first visit runs them, also after each ingest)",
    )
    parser.add_argument(
        "--health-port",
        type=argtypes.port,
        metavar="PORT",
        help="also serve GET /health on this port: 200 when the warehouse (or catalog) can "
        "be read, 503 naming what is down",
    )


def check_sign_in(paths: Paths, address: str) -> bool:
    """Whether the server requires sign-in (then for its whole life); refuse to serve beyond
    loopback without it: the dashboard can launch runs and write reviews, and would let
    anyone who reaches the port do both as anyone."""
    from dashboard.access import ACCESS_FILE, is_loopback, load_access

    signed_in = load_access(paths.home).user_header is not None
    if signed_in or is_loopback(address):
        return signed_in
    raise UsageError(
        f"--address {address} serves the dashboard beyond this machine; it needs sign-in "
        f"first: set sign_in.user_header in {paths.home / ACCESS_FILE} to the header your "
        "sign-in proxy sets (docs/dashboard.md)"
    )


def run(args: argparse.Namespace) -> int:
    """Serve in the foreground until stopped; the server never outlives this process."""
    paths = home.paths(args)
    signed_in = check_sign_in(paths, args.address)
    catalog = home.catalog()
    where = catalog.label if catalog is not None else paths.warehouse
    print(
        f"evalhouse dashboard on http://{args.address}:{args.port} (warehouse {where})", flush=True
    )
    start_health(args, paths)
    return serve_child(
        dashboard_command(
            paths, args.port, args.address, sign_in_required=signed_in, warmup=not args.no_warmup
        )
    )


def start_health(args: argparse.Namespace, paths: Paths) -> None:
    """The ``--health-port`` endpoint beside the dashboard (``evalhouse.health``)."""
    if getattr(args, "health_port", None) is None:
        return
    from evalhouse.health import serve_health

    try:
        serve_health(args.address, args.health_port, paths, home.catalog())
    except OSError as exc:
        raise UsageError(f"--health-port {args.health_port}: {exc.strerror or exc}") from None
    print(f"health check on http://{args.address}:{args.health_port}/health", flush=True)
