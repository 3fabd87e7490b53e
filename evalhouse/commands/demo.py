"""``evalhouse demo``: build demo data if absent, ingest, and serve the dashboard."""

from __future__ import annotations

import argparse

from evalhouse import home
from evalhouse.commands import dashboard
from evalhouse.console import EXIT_CANCELLED, EXIT_OK, err
from evalhouse.processes import dashboard_command, serve_child


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``demo`` subcommand and its flags."""
    p = sub.add_parser(
        "demo", parents=[home.home_options()], help="build demo data, ingest, open the dashboard"
    )
    p.add_argument("--no-dashboard", action="store_true", help="build and ingest only")
    p.add_argument("--rebuild", action="store_true", help="throw away existing data first")
    dashboard.add_server_flags(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Serve first, score after: each demo run shows up once it is scored and ingested."""
    paths = home.paths(args, writes=True)
    # Before minutes of demo runs.
    signed_in = False if args.no_dashboard else dashboard.check_sign_in(paths, args.address)
    from engine.demo_run import build_demo

    if paths.warehouse.exists() and not args.rebuild:
        err(f"demo warehouse already present at {paths.warehouse} (use --rebuild to start over)")
        home.ingest_now(paths)
        return EXIT_OK if args.no_dashboard else dashboard.run(args)
    home.ingest_now(paths, rebuild=args.rebuild, quiet=True)  # the empty warehouse, at once

    def build() -> None:
        build_demo(paths, log=err, after_run=lambda: home.ingest_now(paths))

    if args.no_dashboard:
        try:
            build()
        except KeyboardInterrupt:
            return EXIT_CANCELLED  # as `evalhouse run` says it
        return EXIT_OK
    # The dashboard answers within seconds; the runs take a few minutes.
    err(
        f"demo: the dashboard is starting on http://{args.address}:{args.port}; the demo runs "
        "land there one by one as they are scored (a few minutes in all)"
    )
    dashboard.start_health(args, paths)
    command = dashboard_command(
        paths, args.port, args.address, sign_in_required=signed_in, warmup=not args.no_warmup
    )
    return serve_child(command, while_serving=build)
