"""Run header cards: a run's headline numbers, each with its change against the baseline and
whether that change is beyond noise.

The noise check of a mean (overall score, mean latency) or a rate (pass rate, error rate)
is the normal approximation for two independent samples: the 95% interval of the change is
``delta ± Z95 * sqrt(sd_a² / n_a + sd_b² / n_b)`` (for a rate, ``sd² = p (1 - p)``). Sample
counts and cost have no sampling noise to speak of, and percentiles no simple interval:
those cards show the change without a verdict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Literal

from dashboard import formats
from engine.stats import Z95


@dataclass(frozen=True)
class Card:
    """One header card as shown."""

    label: str
    """Card title."""
    value: str
    """The run's number, formatted."""
    delta: str | None
    """Change against the baseline (signed, formatted); None without a baseline."""
    beyond_noise: bool | None
    """True/False from the noise check; None when there is no check for this card."""
    lower_is_better: bool = False
    """Errors, latency and cost: a rise is bad news."""
    has_baseline: bool = True
    """False when no baseline run is chosen."""
    note: str = ""
    """Appended to a noise verdict (what the verdict is computed on)."""

    def verdict(self) -> str:
        """``beyond noise`` / ``within noise`` / ``no noise check`` / ``no baseline`` /
        ``not measured in both runs``."""
        if not self.has_baseline:
            return "no baseline"
        if self.delta is None:
            return "not measured in both runs"
        if self.beyond_noise is None:
            return "no noise check"
        return ("beyond noise" if self.beyond_noise else "within noise") + self.note


def _num(row: dict[str, Any] | None, key: str) -> float | None:
    if row is None:
        return None
    value = row.get(key)
    if value is None:
        return None
    number = float(value)
    return None if math.isnan(number) else number


def _beyond(delta: float, var_a: float, n_a: float, var_b: float, n_b: float) -> bool | None:
    if n_a < 2 or n_b < 2:
        return None
    half = Z95 * math.sqrt(var_a / n_a + var_b / n_b)
    return abs(delta) > half


def _mean_check(run: dict[str, Any], base: dict[str, Any], key: str, prefix: str) -> bool | None:
    a, b = _num(run, key), _num(base, key)
    sd_a, sd_b = _num(run, f"{prefix}_sd"), _num(base, f"{prefix}_sd")
    n_a, n_b = _num(run, f"{prefix}_n") or 0.0, _num(base, f"{prefix}_n") or 0.0
    if a is None or b is None or sd_a is None or sd_b is None:
        return None
    return _beyond(a - b, sd_a**2, n_a, sd_b**2, n_b)


def _rate_check(run: dict[str, Any], base: dict[str, Any], key: str, n_key: str) -> bool | None:
    a, b = _num(run, key), _num(base, key)
    n_a, n_b = _num(run, n_key) or 0.0, _num(base, n_key) or 0.0
    if a is None or b is None:
        return None
    return _beyond(a - b, a * (1 - a), n_a, b * (1 - b), n_b)


def _fmt(value: float | None, fmt: str, suffix: str = "") -> str:
    return formats.NA if value is None else f"{value:{fmt}}{suffix}"


def changed(delta: str | None) -> bool:
    """Whether a delta as shown is a change at all: "+0" and "+0.0 pts" get no arrow (an
    "↑ +0" reads as a rise)."""
    return delta is not None and any(ch in "123456789" for ch in delta)


def run_cards(run: dict[str, Any], base: dict[str, Any] | None) -> list[Card]:
    """The header cards of ``run`` against ``base`` (``queries.run_cards`` rows)."""

    def delta(key: str, fmt: str, scale: float = 1.0, suffix: str = "") -> str | None:
        a, b = _num(run, key), _num(base, key)
        if base is None or a is None or b is None:
            return None
        return f"{(a - b) * scale:{fmt}}{suffix}"

    def rate(key: str, n_key: str) -> bool | None:
        return None if base is None else _rate_check(run, base, key, n_key)

    def mean(key: str, prefix: str) -> bool | None:
        return None if base is None else _mean_check(run, base, key, prefix)

    pass_rate, error_rate = _num(run, "pass_rate"), _num(run, "error_rate")
    cards = [
        Card("Samples", _fmt(_num(run, "samples"), ",.0f"), delta("samples", "+,.0f"), None),
        Card(
            "Error rate",
            _fmt(error_rate, ".1%"),
            delta("error_rate", "+.1f", 100, " pts"),
            rate("error_rate", "samples"),
            lower_is_better=True,
        ),
        Card(
            "Pass rate",
            _fmt(None if pass_rate is None else pass_rate * 100, ".1f", "%"),
            delta("pass_rate", "+.1f", 100, " pts"),
            rate("pass_rate", "pass_n"),
        ),
        Card(
            "Overall (1-5)",
            _fmt(_num(run, "overall"), ".2f"),
            delta("overall", "+.2f"),
            mean("overall", "overall"),
        ),
        Card(
            "Cost",
            formats.cost(_num(run, "cost_usd")),
            delta("cost_usd", "+,.4f"),
            None,
            lower_is_better=True,
        ),
        Card(
            "Latency p50",
            _fmt(_num(run, "latency_p50"), ",.0f", " ms"),
            delta("latency_p50", "+,.0f", suffix=" ms"),
            # the verdict is on the mean latency: percentiles have no simple interval
            mean("latency_mean", "latency"),
            lower_is_better=True,
            note=" (on the mean)",
        ),
        Card(
            "Latency p95",
            _fmt(_num(run, "latency_p95"), ",.0f", " ms"),
            delta("latency_p95", "+,.0f", suffix=" ms"),
            None,
            lower_is_better=True,
        ),
    ]
    if base is None:
        cards = [replace(c, has_baseline=False) for c in cards]
    return cards


def show_run_cards(cards: list[Card]) -> None:
    """Draw the cards in one row: Δ in colour only when beyond noise, grey otherwise; the
    verdict in each card's help and under its number."""
    import streamlit as st

    per_row = 4  # a number like "1,234 (12.5%)" needs a quarter of the page at 1440 px
    slots = [c for start in range(0, len(cards), per_row) for c in st.columns(per_row)]
    for col, card in zip(slots, cards, strict=False):
        good_way: Literal["inverse", "normal"] = "inverse" if card.lower_is_better else "normal"
        colour: Literal["inverse", "normal", "off"] = good_way if card.beyond_noise else "off"
        col.metric(
            card.label,
            card.value,
            card.delta if changed(card.delta) else None,
            delta_color=colour,
            help=f"Change against the baseline: {card.verdict()}.",
            border=True,
        )
        col.caption(card.verdict())
