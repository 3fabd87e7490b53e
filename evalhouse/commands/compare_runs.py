"""``evalhouse compare-runs A B``: judge which of two runs answered each case better."""

from __future__ import annotations

import argparse

from evalhouse import home
from evalhouse.console import EXIT_OK, UsageError, err


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``compare-runs`` subcommand and its flags."""
    p = sub.add_parser(
        "compare-runs",
        parents=[home.home_options()],
        help="judge which of two runs answered each case better",
    )
    p.add_argument("run_a", help="RUN_ID, or RUN_ID:CANDIDATE for one candidate of a run")
    p.add_argument("run_b", help="RUN_ID, or RUN_ID:CANDIDATE")
    p.add_argument(
        "--judge",
        default="local",
        help="local (rule over stored scores) | openai:MODEL | anthropic:MODEL | ollama:MODEL",
    )
    p.add_argument(
        "--margin", type=float, default=5.0, help="local rule: quality points that are a tie"
    )
    p.add_argument("--concurrency", type=int, default=8, help="judge calls in flight")
    p.add_argument("--no-ingest", action="store_true", help="write the lake only")
    p.add_argument("--estimate", action="store_true", help="print calls and cost, judge nothing")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Check the sides, then estimate or compare; the comparison id is the last line."""
    paths = home.paths(args)
    from engine import pairwise
    from engine.compare_runs import compare_runs

    if args.concurrency < 1:
        raise UsageError(f"--concurrency {args.concurrency}: must be at least 1")
    if args.margin < 0:
        raise UsageError(f"--margin {args.margin:g}: must be 0 or more")
    side_a, side_b = pairwise.Side.parse(args.run_a), pairwise.Side.parse(args.run_b)
    pairs = pairwise.pairs_from_lake(paths.lake, side_a, side_b)
    if args.estimate:
        print(pairwise.estimate_pairs(pairs, args.judge, args.concurrency).render())
        return EXIT_OK
    cid = compare_runs(
        paths.lake, paths.cache, pairs, (side_a, side_b), labels=(args.run_a, args.run_b),
        judge_spec=args.judge, margin=args.margin, concurrency=args.concurrency, log=err,
    )  # fmt: skip
    if not args.no_ingest:
        home.ingest_now(paths, quiet=True)
    print(cid)
    return EXIT_OK
