"""The Overview's first line: which domains changed beyond noise against the baseline.

Pure functions over the Overview frame (``data.overview``: per domain, each metric's
``_delta``, ``_beyond_noise``, ``_low`` and ``_high``), so the sentence a product manager
reads first is tested without a browser. Every metric here is higher-is-better on 0-100.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import polars as pl

Direction = Literal["worse", "better"]


@dataclass(frozen=True)
class DomainChange:
    """A domain whose metrics moved beyond noise: its most significant move."""

    domain: str
    direction: Direction
    """``worse`` when any metric fell beyond noise (a fall outweighs a rise), else ``better``."""
    metric: str
    """The metric that moved most significantly in that direction."""
    delta: float
    low: float
    high: float
    significance: float
    """Distance of the interval's centre from zero in half-widths (bigger is surer)."""
    others: int
    """Further metrics of the domain that moved beyond noise the same way."""
    key: str = ""
    """The metric's name (``metric`` is its label): what a link to its samples filters on."""
    also: tuple[str, ...] = ()
    """The labels of the ``others``, surest first."""


@dataclass(frozen=True)
class Verdict:
    """The sentence and its rows, worse domains first, each group surest first."""

    domains: int
    changes: tuple[DomainChange, ...]
    has_baseline: bool
    scope: str = ""
    """What the judge metrics' changes are when the judge changed (said after the sentence)."""

    @property
    def worse(self) -> tuple[DomainChange, ...]:
        """Domains that got worse beyond noise."""
        return tuple(c for c in self.changes if c.direction == "worse")

    @property
    def better(self) -> tuple[DomainChange, ...]:
        """Domains that got better beyond noise (and no worse on any metric)."""
        return tuple(c for c in self.changes if c.direction == "better")

    def headline(self) -> str:
        """``2 of 5 domains worse beyond noise (acme, beta); 1 better (gamma)``."""
        if not self.has_baseline:
            return "No baseline: pick one to see what changed."
        scope = f" ({self.scope})" if self.scope else ""
        if not self.changes:
            return f"No domain changed beyond noise ({self.domains} compared){scope}."
        parts = [
            f"{len(group)} {label} ({_names(group)})"
            for label, group in (("worse", self.worse), ("better", self.better))
            if group
        ]
        count, rest = parts[0].split(" ", 1)
        noun = "domain" if self.domains == 1 else "domains"
        first = f"{count} of {self.domains} {noun} {rest.replace(' (', ' beyond noise (', 1)}"
        return "; ".join([first, *parts[1:]]) + scope


def _names(group: tuple[DomainChange, ...], shown: int = 4) -> str:
    names = ", ".join(c.domain for c in group[:shown])
    return names + (f" and {len(group) - shown} more" if len(group) > shown else "")


def _significance(low: float, high: float) -> float:
    half = (high - low) / 2
    centre = (high + low) / 2
    return abs(centre) / half if half > 0 else float("inf")


def domain_verdict(
    frame: pl.DataFrame, metrics: dict[str, str], has_baseline: bool, scope: str = ""
) -> Verdict:
    """The verdict of an Overview frame; ``metrics`` maps metric names to their labels;
    ``scope`` says what judge metrics' changes are after a judge change."""
    changes: list[DomainChange] = []
    for row in frame.iter_rows(named=True):
        moves: dict[Direction, list[tuple[float, str, float, float, float, str]]] = {
            "worse": [],
            "better": [],
        }
        for metric, label in metrics.items():
            if not row.get(f"{metric}_beyond_noise"):
                continue
            delta, low, high = row[f"{metric}_delta"], row[f"{metric}_low"], row[f"{metric}_high"]
            if delta is None or low is None or high is None:
                continue
            direction: Direction = "worse" if float(high) < 0 else "better"
            significance = _significance(float(low), float(high))
            moves[direction].append(
                (significance, label, float(delta), float(low), float(high), metric)
            )
        for direction in ("worse", "better"):
            found = sorted(moves[direction], key=lambda m: -m[0])
            if found:
                significance, label, delta, low, high, key = found[0]
                change = DomainChange(
                    str(row["domain"]), direction, label, delta, low, high,
                    significance, len(found) - 1, key, tuple(m[1] for m in found[1:]),
                )  # fmt: skip
                changes.append(change)
                break  # a domain worse on one metric is worse, whatever else rose
    changes.sort(key=lambda c: (c.direction != "worse", -c.significance, c.domain))
    return Verdict(frame.height, tuple(changes), has_baseline, scope)


def moved_too(change: DomainChange) -> str:
    """The other metrics that moved the same way, each named: ``+2 more: RAG recall, Pass
    rate`` (empty when none did)."""
    return f"+{change.others} more: {', '.join(change.also)}" if change.also else ""


def verdict_rows(verdict: Verdict) -> pl.DataFrame:
    """The verdict as a small table: domain, direction, metric, Δ and its interval, and
    the other metrics that moved the same way, by name."""
    return pl.DataFrame(
        [
            {
                "Domain": c.domain,
                "Change": c.direction,
                "Metric": c.metric,
                "Δ": round(c.delta, 1),
                "95% interval": f"[{c.low:+.1f}, {c.high:+.1f}]",
                "Also moved": moved_too(c),
            }
            for c in verdict.changes
        ],
        schema={
            "Domain": pl.String,
            "Change": pl.String,
            "Metric": pl.String,
            "Δ": pl.Float64,
            "95% interval": pl.String,
            "Also moved": pl.String,
        },
    )


def alerts_banner(firing: pl.DataFrame) -> None:
    """One line per alert rule of the series that is firing (``evalhouse`` alerts), above
    the verdict: the on-call engineer's page and the PM's should tell the same story."""
    import streamlit as st

    from dashboard.components.safe import safe_text

    for row in firing.iter_rows(named=True):
        where = f" on {row['domain']}" if row["domain"] else ""
        if row["kind"] == "worse_than_baseline":
            what = "worse than its baseline beyond noise"
        else:
            bound = "minimum" if row["kind"] == "min" else "maximum"
            what = f"at {row['value']:.4g} ({bound} {row['threshold']:g})"
        st.warning(
            safe_text(
                f"Alert {row['rule']!r} firing since {row['since']:%Y-%m-%d %H:%M}: "
                f"{row['metric']}{where} {what} (run {row['fired_in']})."
            ),
            icon=":material/notifications_active:",
        )
