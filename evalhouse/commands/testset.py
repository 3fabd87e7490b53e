"""``evalhouse testset from-pages|from-logs|accept|diff``: build a test set, or compare
two of its versions."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalhouse import home
from evalhouse.commands import testset_diff
from evalhouse.console import EXIT_OK, err


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``testset`` subcommand, its three actions and their flags."""
    common = home.home_options()
    t = sub.add_parser("testset", help="build a test set, or diff two of its versions")
    actions = t.add_subparsers(dest="action", required=True)
    p = actions.add_parser("from-pages", parents=[common], help="cases from ground-truth pages")
    p.add_argument("paths", nargs="+", type=Path, help="folders or files (.md .html .txt)")
    p.add_argument("--urls", type=Path, help="'URL PATH' per line: saved pages and their URLs")
    p.add_argument("--base-url", help="page URL = BASE_URL/relative path (when a page has none)")
    p.add_argument("--domain", help="domain of cases whose page URL has no host")
    p.add_argument("--count", type=int, default=30, help="cases to generate (default 30)")
    p.add_argument("--styles", help="simple,reasoning,multi-context,adversarial,out-of-scope")
    p.add_argument("--judge", default="local", help="local (offline) | openai:MODEL | ...")
    p.add_argument("--estimate", action="store_true", help="LLM calls and cost, then stop")
    p.add_argument("--dedupe-threshold", type=float, default=0.92, help="cosine (default 0.92)")
    p.add_argument(
        "--instructions", default="", metavar="TEXT",
        help="what the questions should be like, for the LLM writer (with --judge)",
    )  # fmt: skip
    p = actions.add_parser("from-logs", parents=[common], help="cases from a query log")
    p.add_argument("log", type=Path, help="CSV or JSONL of queries (timestamps, sources, ...)")
    p.add_argument("--pages", nargs="+", type=Path, help="ground-truth pages to attach")
    p.add_argument("--per-group", type=int, default=5, help="clusters per domain and intent")
    p.add_argument("--cluster-threshold", type=float, default=0.9, help="cosine (default 0.9)")
    for p in actions.choices.values():
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--embedder", default="local", help="local (default) | openai:MODEL")
        p.add_argument("--output", type=Path, help="test set to write (native JSONL)")
        p.add_argument("--review", type=Path, help="CSV to edit first, then `testset accept`")
        p.set_defaults(func=run)
    p = actions.add_parser("accept", help="turn an edited review CSV into a test set")
    p.add_argument("review_file", type=Path, metavar="REVIEW.csv")
    p.add_argument("--output", type=Path, required=True, help="test set to write")
    p.set_defaults(func=run)
    testset_diff.add_parser(actions)


def run(args: argparse.Namespace) -> int:
    """Build (or accept) the test set; what happened goes to standard error."""
    from engine.testsets.build import commands

    if args.action == "accept":
        lines = commands.accept(args.review_file, args.output)
    else:
        dest = commands.destination(args.output, args.review)
        if args.action == "from-pages":
            lines = commands.from_pages(
                home.paths(args), args.paths, dest, count=args.count, styles=args.styles,
                seed=args.seed, judge=args.judge, embedder=args.embedder, urls=args.urls,
                base_url=args.base_url, domain=args.domain or "",
                dedupe_threshold=args.dedupe_threshold, estimate=args.estimate,
                instructions=args.instructions,
            )  # fmt: skip
        else:
            lines = commands.from_logs(
                home.paths(args), args.log, dest, pages=args.pages or (),
                per_group=args.per_group, seed=args.seed, embedder=args.embedder,
                threshold=args.cluster_threshold,
            )  # fmt: skip
    for line in lines:
        err(line)
    return EXIT_OK
