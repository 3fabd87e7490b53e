"""The CI gate's outcome as Markdown a pull request shows (``check --format markdown`` and
GitHub's job summary): the verdict line, every check with its scale and value, regressions
per metric against the baseline, and the worst samples with their ids.

Pure rendering: the caller fetches everything. Every string that comes from data (run and
sample ids, candidates, metric names, reasons) goes through ``cell``, so a ``|``, a newline
or Markdown markup in a sample id can neither break a table nor format the comment.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from engine.gate import GateCheck

_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~&$])")
_REASON_CHARS = 160


def cell(text: object, limit: int | None = None) -> str:
    """``text`` safe inside a Markdown table cell or a line: one line (newlines become
    spaces), shortened to ``limit`` characters, every Markdown-special character escaped
    with a backslash (``|`` included, so the table keeps its columns)."""
    flat = " ".join(str(text).split())
    if limit is not None and len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return _SPECIAL.sub(r"\\\1", flat)


@dataclass(frozen=True)
class WorstSample:
    """One of the run's worst samples (``warehouse.queries.check_worst_samples``)."""

    sample_id: str
    candidate: str
    errors: int
    """Result rows of the sample that failed."""
    grader_errors: int
    """Grader results that failed on it."""
    failed: int
    """Result rows whose rubric failed."""
    accuracy: float | None
    """Mean accuracy, 0-100."""
    grader_mean: float | None
    """Mean grader score, 0-1."""
    why: str | None
    """The first error or grader failure."""

    @property
    def outcome(self) -> str:
        """What went wrong, in words."""
        parts = []
        if self.errors:
            parts.append(f"{self.errors} error{'s' if self.errors > 1 else ''}")
        if self.grader_errors:
            n = self.grader_errors
            parts.append(f"{n} grader failure{'s' if n > 1 else ''}")
        if self.failed:
            parts.append(f"rubric failed {self.failed}×")
        return ", ".join(parts) or "passed"


@dataclass(frozen=True)
class Regression:
    """Samples of one metric that fell beyond the tolerance against the baseline."""

    metric: str
    samples: int
    allowed: int | None
    """The gate's limit; None when regressions are shown but not gated."""
    change: str = ""
    """The metric's mean change with its noise interval (``gate.Change.words``)."""


def _number(value: float | None, digits: str = ".4g") -> str:
    return "n/a" if value is None else format(value, digits)


def verdict_line(checks: Sequence[GateCheck], run_id: str, baseline: str | None) -> str:
    """The first line: passed or failed, how many checks, which run."""
    failed = [c for c in checks if not c.passed]
    against = f" against baseline {cell(baseline)}" if baseline else ""
    if not checks:
        return f"### evalhouse check: nothing to check for run {cell(run_id)}"
    if failed:
        return (
            f"### ❌ evalhouse check failed: {len(failed)} of {len(checks)} checks failed "
            f"for run {cell(run_id)}{against}"
        )
    return (
        f"### ✅ evalhouse check passed: all {len(checks)} checks for run {cell(run_id)}{against}"
    )


def render_markdown(
    checks: Sequence[GateCheck],
    *,
    run_id: str,
    baseline: str | None = None,
    regressions: Sequence[Regression] = (),
    tolerance: float = 5.0,
    worst: Sequence[WorstSample] = (),
) -> str:
    """The whole summary as Markdown (ends with a newline)."""
    lines = [verdict_line(checks, run_id, baseline), ""]
    failing = [c for c in checks if not c.passed]
    if failing:
        lines.append("Failing: " + "; ".join(f"**{cell(c.name)}**" for c in failing))
        lines.append("")
    if checks:
        lines += ["| | Check (scale) | Actual | Detail |", "|---|---|---:|---|"]
        for c in checks:
            status = "✅ pass" if c.passed else "❌ **FAIL**"
            lines.append(
                f"| {status} | {cell(c.name)} | {_number(c.actual)} | "
                f"{cell(c.detail, _REASON_CHARS)} |"
            )
        lines.append("")
    if baseline is not None:
        lines.append(
            f"#### Regressions against {cell(baseline)} "
            f"(samples down more than {tolerance:g} points of 0-100)"
        )
        lines.append("")
        if regressions:
            lines += [
                "| Metric | Samples regressed | Allowed | Mean change (95% interval) |",
                "|---|---:|---:|---|",
            ]
            for r in regressions:
                allowed = "not gated" if r.allowed is None else str(r.allowed)
                change = cell(r.change) or "-"
                lines.append(f"| {cell(r.metric)} | {r.samples} | {allowed} | {change} |")
        else:
            lines.append("No regression metric was counted.")
        lines.append("")
    if worst:
        lines += [
            f"#### Worst {len(worst)} samples",
            "",
            "| Sample | Candidate | Outcome | Accuracy (0-100) | Graders (0-1) | Why |",
            "|---|---|---|---:|---:|---|",
        ]
        for w in worst:
            lines.append(
                f"| {cell(w.sample_id)} | {cell(w.candidate) or '-'} | {w.outcome} | "
                f"{_number(w.accuracy, '.1f')} | {_number(w.grader_mean, '.2f')} | "
                f"{cell(w.why or '', _REASON_CHARS)} |"
            )
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"
