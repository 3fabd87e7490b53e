"""``check``'s Markdown summary: gathered from the warehouse, printed or written for
``--format markdown``, and appended to ``$GITHUB_STEP_SUMMARY`` whenever that is set (so a
GitHub Actions job shows it whatever the format)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from engine.gate import Change, GateCheck
from engine.gate_markdown import Regression, WorstSample, render_markdown
from evalhouse.console import UsageError

if TYPE_CHECKING:
    from warehouse.queries import Warehouse

WORST_SAMPLES = 5
"""Samples listed under "Worst samples": enough to start from, short enough for a comment."""
STEP_SUMMARY = "GITHUB_STEP_SUMMARY"
"""The file GitHub Actions shows as the job's summary (Markdown, appended to)."""


def wanted(args: argparse.Namespace) -> bool:
    """Whether this check writes a Markdown summary at all."""
    return args.format == "markdown" or bool(os.environ.get(STEP_SUMMARY))


def build(
    args: argparse.Namespace,
    warehouse: Warehouse,
    checks: Sequence[GateCheck],
    regressions: Mapping[str, int],
    regression_metrics: Sequence[str],
    count: Callable[[str], int],
    max_regressions: int | None,
    changes: Mapping[str, Change],
) -> str:
    """The summary of ``checks``; with ``--baseline`` the regressions of every regression
    metric (``count`` counts the ones the gate did not) and each one's mean change with its
    noise interval (``changes``)."""
    from warehouse import queries

    counted = [
        Regression(
            metric,
            regressions[metric] if metric in regressions else count(metric),
            max_regressions if metric in regressions else None,
            changes[metric].words() if metric in changes else "",
        )
        for metric in (regression_metrics if args.baseline else [])
    ]
    frame = queries.check_worst_samples(warehouse, args.run_id, args.candidate, limit=WORST_SAMPLES)
    worst = [
        WorstSample(
            sample_id=str(row["sample_id"]),
            candidate=str(row["candidate"] or ""),
            errors=int(row["errors"]),
            grader_errors=int(row["grader_errors"]),
            failed=int(row["failed"]),
            accuracy=row["accuracy"],
            grader_mean=row["grader_mean"],
            why=row["why"],
        )
        for row in frame.iter_rows(named=True)
    ]
    return render_markdown(
        checks,
        run_id=args.run_id,
        baseline=args.baseline,
        regressions=counted,
        tolerance=args.tolerance,
        worst=worst,
    )


def append_step_summary(markdown: str) -> Path | None:
    """Append to ``$GITHUB_STEP_SUMMARY`` when it is set; the file it wrote, or None.
    Raises UsageError (one line naming the variable and the file) when it cannot."""
    target = os.environ.get(STEP_SUMMARY)
    if not target:
        return None
    path = Path(target)
    try:
        with path.open("a", encoding="utf-8") as out:
            out.write(markdown + "\n")
    except OSError as err:
        raise UsageError(
            f"{STEP_SUMMARY}={target}: cannot append the summary: {err.strerror}"
        ) from None
    return path
