"""The CI gate behind ``evalhouse check``: thresholds over a run's metrics, as data.

Pure logic: the caller fetches metric means and regressions from the warehouse and
this module decides, renders a short table, and writes JUnit XML so CI systems show
each threshold as a test case.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from xml.etree import ElementTree as ET

from engine.errors import InputError

_THRESHOLD = re.compile(r"^\s*([A-Za-z_][\w:.-]*)\s*=\s*(-?\d+(?:\.\d+)?)\s*$")


class GateSpecError(InputError, ValueError):
    """A threshold could not be parsed."""


@dataclass(frozen=True)
class Threshold:
    """``metric`` must be at least (``kind == "min"``) or at most (``"max"``) ``value``."""

    metric: str
    value: float
    kind: str = "min"


@dataclass(frozen=True)
class GateCheck:
    """The outcome of one threshold."""

    name: str
    passed: bool
    actual: float | None
    limit: float
    detail: str


def parse_threshold(text: str, kind: str = "min") -> Threshold:
    """Parse ``METRIC=VALUE`` (e.g. ``accuracy=70``, ``grader:tone=0.8``)."""
    match = _THRESHOLD.match(text)
    if not match:
        raise GateSpecError(f"threshold {text!r} is not METRIC=NUMBER (e.g. accuracy=70)")
    return Threshold(match.group(1), float(match.group(2)), kind)


def evaluate_gate(
    metrics: Mapping[str, float | None],
    thresholds: Sequence[Threshold],
    *,
    regressions: int | None = None,
    max_regressions: int | None = None,
) -> list[GateCheck]:
    """One check per threshold (and one for regressions when a limit is given)."""
    checks: list[GateCheck] = []
    for t in thresholds:
        actual = metrics.get(t.metric)
        sign = ">=" if t.kind == "min" else "<="
        if actual is None:
            known = ", ".join(sorted(metrics)) or "none"
            checks.append(
                GateCheck(
                    f"{t.metric} {sign} {t.value:g}",
                    False,
                    None,
                    t.value,
                    f"the run has no value for {t.metric} (metrics with values: {known})",
                )
            )
            continue
        ok = actual >= t.value if t.kind == "min" else actual <= t.value
        checks.append(
            GateCheck(
                f"{t.metric} {sign} {t.value:g}",
                ok,
                actual,
                t.value,
                f"{t.metric} = {actual:.4g}",
            )
        )
    if max_regressions is not None:
        n = regressions or 0
        checks.append(
            GateCheck(
                f"regressions <= {max_regressions}",
                n <= max_regressions,
                float(n),
                float(max_regressions),
                f"{n} samples regressed against the baseline",
            )
        )
    return checks


def render_table(checks: Sequence[GateCheck]) -> str:
    """A short fixed-width table: status, check, actual value."""
    if not checks:
        return "no thresholds given: nothing to check"
    width = max(len(c.name) for c in checks)
    lines = [f"{'':4}  {'check':<{width}}  actual"]
    for c in checks:
        actual = "n/a" if c.actual is None else f"{c.actual:.4g}"
        lines.append(f"{'ok' if c.passed else 'FAIL':<4}  {c.name:<{width}}  {actual}")
    failed = [c for c in checks if not c.passed]
    lines.append(f"{len(checks) - len(failed)} passed, {len(failed)} failed")
    return "\n".join(lines)


def junit_xml(checks: Sequence[GateCheck], *, suite: str) -> str:
    """A JUnit XML report: one test case per check, failures with their detail."""
    failures = sum(not c.passed for c in checks)
    root = ET.Element(
        "testsuites", name="evalhouse", tests=str(len(checks)), failures=str(failures)
    )
    ts = ET.SubElement(
        root, "testsuite", name=suite, tests=str(len(checks)), failures=str(failures), errors="0"
    )
    for c in checks:
        case = ET.SubElement(ts, "testcase", classname=f"evalhouse.{suite}", name=c.name)
        if not c.passed:
            ET.SubElement(case, "failure", message=c.detail).text = c.detail
        else:
            ET.SubElement(case, "system-out").text = c.detail
    return ET.tostring(root, encoding="unicode", xml_declaration=True)
