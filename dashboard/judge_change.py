"""A judge change between a run and its baseline, as the verdict line, movers and cards see it.

When the two runs were scored by different judges (or judge prompt versions), the observed
change of a judge metric mixes the system's change with the judge's drift. Where a drift
check measured the judge on the series' anchors (``engine.drift``), the verdict uses the
system change: observed minus drift, its interval widened by the drift's (the observed
interval's ends minus the drift interval's opposite ends, so both uncertainties count).
Where no check was made, judge metrics get no verdict at all: "not comparable" is the only
honest answer. Analyzer, grader and retrieval metrics are not the judge's and are kept.

Pure functions over the Overview frame (``data.overview``) and the header cards, so the
rule "a judge-only shift never reads worse beyond noise" is tested without a browser.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import polars as pl

from dashboard import formats
from dashboard.components.cards import Card
from engine.drift import DRIFT_METRICS
from engine.noise import NoiseCheck

NOT_COMPARABLE = "not comparable: judge changed, no drift check"
"""The noise verdict of a judge metric across a judge change that no drift check measured."""


@dataclass(frozen=True)
class Drift:
    """One judge metric's drift between the two judges (0-100 points, new - old)."""

    shift: float
    low: float | None
    high: float | None
    anchors: int


@dataclass(frozen=True)
class JudgeChange:
    """The run's judge differs from its baseline's."""

    old: str
    """The baseline's judge as ``judge@prompt version``."""
    new: str
    """The run's judge as ``judge@prompt version``."""
    series: str
    drift: Mapping[str, Drift]
    """Per judge metric, the drift the latest check against this baseline measured (empty
    without a check)."""

    @property
    def measured(self) -> bool:
        """Whether a drift check measured the judge, so judge metrics have a system change."""
        return bool(self.drift)

    def scope(self) -> str:
        """What the verdict's judge metrics are, said after the verdict sentence."""
        if self.measured:
            return "judge metrics: the system's change, judge drift taken out"
        return "judge metrics not compared: the judge changed"

    def versions(self) -> str:
        """Both judges with their prompt versions, for an analyst's caption or a tooltip."""
        return f"{self.old} → {self.new}"

    def note(self) -> str:
        """The sentence the first screen and the report lead with, judges by their readable
        names (a prompt-only change says so: both names are the same)."""
        old, new = formats.judge_name(self.old), formats.judge_name(self.new)
        if old == new:
            head = f"Judge changed: {new}, with new prompts or rules since the baseline."
        else:
            head = f"Judge changed: {old} (baseline) → {new}."
        if self.measured:
            return (
                f"{head} Judge metrics show the system's change: the judge's drift, measured "
                "on the series' anchors, is taken out of the observed change."
            )
        return (
            f"{head} Judge metrics are not comparable between these runs (no drift check "
            f"yet: run `evalhouse drift --series '{self.series}'`); only the analyzer's, "
            "graders' and retrieval metrics get a verdict."
        )


def judge_change_of(
    run: Mapping[str, object] | None, base: Mapping[str, object] | None, split: pl.DataFrame
) -> JudgeChange | None:
    """The judge change between ``run`` and ``base`` (``drift_run_series`` rows) with the
    drift of ``split`` (``judge_drift_split`` rows); None when the judge is the same."""
    if run is None or base is None or run["judge"] == base["judge"]:
        return None
    drift = {
        str(r["metric"]): Drift(float(r["mean_shift"]), r["ci_low"], r["ci_high"], int(r["n"]))
        for r in split.iter_rows(named=True)
        if r["mean_shift"] is not None
    }
    return JudgeChange(str(base["judge"]), str(run["judge"]), str(run["series"]), drift)


def system_interval(
    low: float | None, high: float | None, drift: Drift
) -> tuple[float | None, float | None]:
    """The system change's interval: the observed one's ends minus the drift's opposite
    ends (None when either has no interval)."""
    if low is None or high is None or drift.low is None or drift.high is None:
        return None, None
    return low - drift.high, high - drift.low


def system_frame(frame: pl.DataFrame, change: JudgeChange | None) -> pl.DataFrame:
    """The Overview frame with every judge metric's ``_delta``, ``_low``, ``_high``,
    ``_beyond_noise`` and ``_noise`` made the system's (or "not comparable")."""
    if change is None:
        return frame
    columns: list[pl.Series] = []
    for metric in DRIFT_METRICS:
        if f"{metric}_delta" not in frame.columns:
            continue
        deltas: list[float | None] = []
        lows: list[float | None] = []
        highs: list[float | None] = []
        flags: list[bool | None] = []
        labels: list[str | None] = []
        drift = change.drift.get(metric)
        for row in frame.iter_rows(named=True):
            observed = row[f"{metric}_delta"]
            if drift is None or observed is None:
                deltas.append(None if drift is None else observed)
                lows.append(None)
                highs.append(None)
                flags.append(None)
                labels.append(NOT_COMPARABLE if observed is not None else row[f"{metric}_noise"])
                continue
            low, high = system_interval(row[f"{metric}_low"], row[f"{metric}_high"], drift)
            check = NoiseCheck("bootstrap", low, high, note="no interval")
            system = float(observed) - drift.shift
            deltas.append(system)
            lows.append(low)
            highs.append(high)
            flags.append(check.beyond_noise)
            labels.append(
                f"system Δ {system:+.1f} {check.label()}; observed {float(observed):+.1f}, "
                f"judge drift {drift.shift:+.1f}"
            )
        columns += [
            pl.Series(f"{metric}_delta", deltas, dtype=pl.Float64),
            pl.Series(f"{metric}_low", lows, dtype=pl.Float64),
            pl.Series(f"{metric}_high", highs, dtype=pl.Float64),
            pl.Series(f"{metric}_beyond_noise", flags, dtype=pl.Boolean),
            pl.Series(f"{metric}_noise", labels, dtype=pl.String),
        ]
    return frame.with_columns(columns)


CARD_METRICS = {"Pass rate": "pass_rate", "Overall (1-5)": None}
"""The header cards a judge decides, with the drift metric that measures each (the rubric's
overall has no drift of its own: it is not comparable across judges)."""


def system_cards(
    cards: list[Card], change: JudgeChange | None, noise: Mapping[str, NoiseCheck] | None
) -> list[Card]:
    """The header cards with the judge's cards made the system's change (pass rate, its
    drift taken out of the observed points) or marked not comparable."""
    if change is None:
        return cards
    out = []
    for card in cards:
        if card.label not in CARD_METRICS or card.delta is None:
            out.append(card)
            continue
        metric = CARD_METRICS[card.label]
        drift = None if metric is None else change.drift.get(metric)
        check = None if noise is None or metric is None else noise.get(metric)
        if drift is None or metric is None:
            out.append(replace(card, delta=None, beyond_noise=None, judge_note=NOT_COMPARABLE))
            continue
        observed = float(card.delta.split()[0])
        system = observed - drift.shift
        low, high = (None, None) if check is None else (check.low, check.high)
        # The card's interval is on 0-1 shares; the drift's on 0-100 points.
        low, high = system_interval(
            None if low is None else low * 100, None if high is None else high * 100, drift
        )
        beyond = NoiseCheck("bootstrap", low, high).beyond_noise
        out.append(
            replace(
                card,
                delta=f"{system:+.1f} pts",
                beyond_noise=beyond,
                note=f" (system change: observed {observed:+.1f}, judge drift {drift.shift:+.1f})",
            )
        )
    return out
