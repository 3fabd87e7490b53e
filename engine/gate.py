"""The CI gate behind ``evalhouse check``: thresholds over a run's metrics, as data.

Pure logic: the caller fetches metric values and per-metric regression counts from the
warehouse and this module decides, renders a short table, and writes JUnit XML so CI
systems show each threshold as a test case. Every threshold is read on its metric's scale
(``engine.models.metrics``): the scale is shown next to it, and a value off the scale is
refused before anything is checked.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from xml.etree import ElementTree as ET

from engine.errors import InputError
from engine.models.metrics import PERCENT, Scale, scale_of
from engine.noise import METHOD_CAPTION, NoiseCheck

_THRESHOLD = re.compile(r"^\s*([A-Za-z_][\w:.@-]*)\s*=\s*(-?\d+(?:\.\d+)?)\s*$")


class GateSpecError(InputError, ValueError):
    """A threshold could not be parsed, or lies off its metric's scale."""


@dataclass(frozen=True)
class Threshold:
    """``metric`` must be at least (``kind == "min"``) or at most (``"max"``) ``value``."""

    metric: str
    value: float
    kind: str = "min"

    @property
    def flag(self) -> str:
        """The flag and value as the user wrote them (``--min accuracy=70``)."""
        return f"--{self.kind} {self.metric}={self.value:g}"


@dataclass(frozen=True)
class GateCheck:
    """The outcome of one threshold."""

    name: str
    """The threshold with its scale, e.g. ``accuracy >= 70 (0-100)``."""
    passed: bool
    actual: float | None
    limit: float
    detail: str


@dataclass(frozen=True)
class Change:
    """A metric's change against the baseline: the mean of its paired per-sample deltas
    (0-100 form) and the noise check of that mean."""

    delta: float | None
    noise: NoiseCheck

    @property
    def worse_beyond_noise(self) -> bool:
        """The whole 95% interval lies below zero."""
        return self.noise.beyond_noise is True and (self.noise.high or 0.0) < 0

    def words(self) -> str:
        """``-1.5 points, within noise [-4.6, +0.0] (bootstrap) on 12 paired samples``."""
        if self.delta is None:
            return self.noise.label()
        text = f"{self.delta:+.1f} points, {self.noise.label()}"
        if self.noise.beyond_noise is not None:
            text += f" on {self.noise.pairs} paired samples"
        return text


def parse_threshold(text: str, kind: str = "min") -> Threshold:
    """Parse ``METRIC=VALUE`` (e.g. ``accuracy=70``, ``grader:tone=0.8``)."""
    match = _THRESHOLD.match(text)
    if not match:
        raise GateSpecError(f"threshold {text!r} is not METRIC=NUMBER (e.g. accuracy=70)")
    return Threshold(match.group(1), float(match.group(2)), kind)


def _scale_words(scale: Scale) -> str:
    return f"the {scale.name} scale ({scale.meaning})"


def check_scales(thresholds: Sequence[Threshold]) -> list[str]:
    """Refuse (``GateSpecError``, one line naming the flag, the metric and its scale) a
    threshold off its metric's scale; return a warning for each that is on the scale but
    looks written for another one (``--min accuracy=0.8``: accuracy is 0-100, so 0.8 means
    0.8 points, almost surely meant as 80). Metrics without a known scale are the
    caller's to refuse."""
    warnings = []
    for t in thresholds:
        scale = scale_of(t.metric)
        if scale is None:
            continue
        if not scale.contains(t.value):
            raise GateSpecError(
                f"{t.flag}: {t.metric} is on {_scale_words(scale)}; {t.value:g} is outside it"
            )
        if scale is PERCENT and 0 < t.value <= 1:
            warnings.append(
                f"warning: {t.flag}: {t.metric} is on the 0-100 scale, so this is "
                f"{t.value:g} point(s) out of 100; for {t.value:.0%} write "
                f"{t.metric}={t.value * 100:g}"
            )
    return warnings


def _unit(metric: str) -> str:
    scale = scale_of(metric)
    return f" ({scale.name})" if scale is not None else ""


def evaluate_gate(
    metrics: Mapping[str, float | None],
    thresholds: Sequence[Threshold],
    *,
    regressions: Mapping[str, int] | None = None,
    max_regressions: int | None = None,
    tolerance: float = 5.0,
    notes: Mapping[str, str] | None = None,
    required_missing: tuple[int, int] | None = None,
    changes: Mapping[str, Change] | None = None,
) -> list[GateCheck]:
    """One check per threshold, and with a regression limit one per metric whose regressed
    samples were counted (``regressions``: metric -> samples that fell by more than
    ``tolerance`` points of the 0-100 form). ``notes`` add a word to a metric's detail
    (why it has no value, what its errors were). ``required_missing`` (result rows that
    miss a required claim, rows with one) adds the ``--require-all-required`` check: none
    may miss one, as ``require_all_required: true`` fails a sample that does. ``changes``
    (metric -> its change against the baseline) adds one check per metric: not worse
    beyond noise (``check --fail-beyond-noise``)."""
    notes = notes or {}
    checks: list[GateCheck] = []
    for t in thresholds:
        actual = metrics.get(t.metric)
        sign = ">=" if t.kind == "min" else "<="
        name = f"{t.metric} {sign} {t.value:g}{_unit(t.metric)}"
        note = f"; {notes[t.metric]}" if t.metric in notes else ""
        if actual is None:
            known = ", ".join(sorted(m for m, v in metrics.items() if v is not None)) or "none"
            checks.append(
                GateCheck(
                    name,
                    False,
                    None,
                    t.value,
                    f"the run has no value for {t.metric}{note} (metrics with values: {known})",
                )
            )
            continue
        ok = actual >= t.value if t.kind == "min" else actual <= t.value
        checks.append(
            GateCheck(
                name, ok, actual, t.value, f"{t.metric} = {actual:.4g}{_unit(t.metric)}{note}"
            )
        )
    if max_regressions is not None:
        for metric, n in (regressions or {}).items():
            checks.append(
                GateCheck(
                    f"regressions of {metric} <= {max_regressions} "
                    f"(samples down > {tolerance:g} points of 0-100)",
                    n <= max_regressions,
                    float(n),
                    float(max_regressions),
                    f"{n} samples' {metric} fell by more than {tolerance:g} points (its 0-100 "
                    "form) against the baseline",
                )
            )
    if required_missing is not None:
        missing, total = required_missing
        detail = (
            f"{missing} of {total} result rows with a required claim miss (or contradict) "
            "at least one"
            if total
            else "no result row has a claim of importance required"
        )
        checks.append(
            GateCheck("every required claim found", missing == 0, float(missing), 0.0, detail)
        )
    for metric, change in (changes or {}).items():
        checks.append(
            GateCheck(
                f"{metric} not worse beyond noise (95% interval of the change)",
                not change.worse_beyond_noise,
                change.delta,
                0.0,
                f"{metric} against the baseline: {change.words()}",
            )
        )
    return checks


def render_changes(changes: Mapping[str, Change], baseline: str) -> str:
    """The change of each metric against ``baseline`` with its interval, and the method."""
    if not changes:
        return ""
    width = max(len(m) for m in changes)
    lines = [f"change against {baseline}:"]
    lines += [f"  {m:<{width}}  {c.words()}" for m, c in changes.items()]
    lines.append(f"({METHOD_CAPTION})")
    return "\n".join(lines)


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
