"""``evalhouse pause RUN_ID`` and ``evalhouse continue RUN_ID``: hold a running run and let
it go on (``engine.run.control``). Samples in flight finish and are kept; a paused run
reads ``paused``, not failed, and resumes where it stood."""

from __future__ import annotations

import argparse

from evalhouse import home
from evalhouse.console import EXIT_OK, UsageError, err


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``pause`` and ``continue`` subcommands."""
    for name, text in (("pause", "pause a running run"), ("continue", "let a paused run go on")):
        p = sub.add_parser(name, parents=[home.home_options()], help=text)
        p.add_argument("run_id", metavar="RUN_ID")
        p.set_defaults(func=run, pause=name == "pause")


def run(args: argparse.Namespace) -> int:
    """Write or remove the run's control file, once the run is known to be going."""
    from engine.run.control import request_continue, request_pause
    from engine.run.identity import latest_run_states

    paths = home.paths(args)
    state = latest_run_states(paths.lake).get(args.run_id)
    if state is None:
        raise UsageError(f"no run {args.run_id!r} in {paths.lake}")
    if state.status not in ("running", "paused"):
        raise UsageError(f"run {args.run_id} is {state.status}: only a running run pauses")
    if args.pause:
        request_pause(paths, args.run_id)
        err(f"run {args.run_id}: pausing (samples in flight finish; evalhouse continue resumes)")
    else:
        request_continue(paths, args.run_id)
        err(f"run {args.run_id}: continuing")
    return EXIT_OK
