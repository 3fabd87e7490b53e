"""``evalhouse candidates vary FILE --count N``: write variants of a candidate file."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalhouse import home
from evalhouse.console import EXIT_OK, UsageError, err


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``candidates`` subcommand and its ``vary`` action."""
    c = sub.add_parser("candidates", help="work on candidate files (prompt variants)")
    actions = c.add_subparsers(dest="action", required=True)
    p = actions.add_parser(
        "vary",
        parents=[home.home_options()],
        help="write variants of a candidate file next to it, each recording parent and edit",
    )
    p.add_argument("file", type=Path, help="the parent: candidates/<family>/<name>.md")
    p.add_argument("--count", type=int, required=True, help="variants to write (1-1000)")
    p.add_argument("--seed", type=int, default=0, help="which variants are drawn (default 0)")
    p.add_argument(
        "--judge",
        default="local",
        help="local (rule-based wording) | openai:MODEL | ollama:MODEL | anthropic:MODEL",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Write the variants; one line per variant (``written`` or ``exists``) on stdout."""
    from engine.candidates.rewrite import build_rewriter
    from engine.candidates.vary import vary
    from engine.judges.base import JudgeError

    rewriter = None
    if args.judge.strip() != "local":
        try:
            rewriter = build_rewriter(args.judge, home.paths(args).cache)
        except JudgeError as exc:
            raise UsageError(f"--judge {args.judge}: {exc}") from None
    try:
        report = vary(args.file, args.count, seed=args.seed, rewriter=rewriter)
    except JudgeError as exc:
        # A reply that is no JSON, lacks the prompt or drops a placeholder (after the
        # client's one repair), or a server that kept failing: no variant is written.
        raise UsageError(
            f"--judge {args.judge}: no variant written: {' '.join(str(exc).split())}"
        ) from None
    for variant in report.written:
        print(f"written\t{variant.id}\t{variant.path}")
    for variant in report.existing:
        print(f"exists\t{variant.id}\t{variant.path}")
    err(
        f"{len(report.written)} variants of {report.parent} written, "
        f"{len(report.existing)} already there"
    )
    return EXIT_OK
