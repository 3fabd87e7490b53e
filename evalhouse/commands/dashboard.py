"""``evalhouse dashboard``: serve the dashboard (loopback only unless ``--address``)."""

from __future__ import annotations

import argparse

from evalhouse import argtypes, home
from evalhouse.processes import dashboard_command, serve_child


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``dashboard`` subcommand and its flags."""
    p = sub.add_parser("dashboard", parents=[home.home_options()], help="serve the dashboard")
    add_server_flags(p)
    p.set_defaults(func=run)


def add_server_flags(parser: argparse.ArgumentParser) -> None:
    """``--port`` and ``--address`` (also taken by ``demo``)."""
    parser.add_argument("--port", type=argtypes.port, default=8501)
    parser.add_argument(
        "--address", default="127.0.0.1", help="bind address (default loopback only)"
    )


def run(args: argparse.Namespace) -> int:
    """Serve in the foreground until stopped; the server never outlives this process."""
    paths = home.paths(args)
    catalog = home.catalog()
    where = catalog.label if catalog is not None else paths.warehouse
    print(
        f"evalhouse dashboard on http://{args.address}:{args.port} (warehouse {where})", flush=True
    )
    return serve_child(dashboard_command(paths, args.port, args.address))
