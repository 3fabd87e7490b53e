"""Run header cards: a run's headline numbers, each with its change against the baseline and
whether that change is beyond noise.

The noise check of a card is the one every page uses (``engine.noise``): the paired
bootstrap over the samples both runs answered, each sample's value the mean over its
iterations (``data.card_noise``). Sample counts and cost have no sampling noise to speak
of, and percentiles no simple interval: those cards show the change without a verdict.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from dashboard import formats
from engine.noise import NoiseCheck

CARD_NOISE_METRICS = ("error_rate", "pass_rate", "abstention_rate", "overall", "latency_mean")
"""The cards' per-sample values whose change gets a noise check
(``queries.card_sample_deltas`` columns)."""


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
    judge_note: str = ""
    """Why the change is not shown (the judge changed and nothing measured its drift)."""

    def verdict(self) -> str:
        """``beyond noise`` / ``within noise`` / ``no noise check`` / ``no baseline`` /
        ``not measured in both runs`` / the judge note."""
        if not self.has_baseline:
            return "no baseline"
        if self.judge_note:
            return self.judge_note
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


def _fmt(value: float | None, fmt: str, suffix: str = "") -> str:
    return formats.NA if value is None else f"{value:{fmt}}{suffix}"


def changed(delta: str | None) -> bool:
    """Whether a delta as shown is a change at all: "+0" and "+0.0 pts" get no arrow (an
    "↑ +0" reads as a rise)."""
    return delta is not None and any(ch in "123456789" for ch in delta)


def run_cards(
    run: dict[str, Any],
    base: dict[str, Any] | None,
    noise: Mapping[str, NoiseCheck] | None = None,
) -> list[Card]:
    """The header cards of ``run`` against ``base`` (``queries.run_cards`` rows), with the
    noise checks of their changes (``CARD_NOISE_METRICS``; none without a baseline)."""

    def delta(key: str, fmt: str, scale: float = 1.0, suffix: str = "") -> str | None:
        a, b = _num(run, key), _num(base, key)
        if base is None or a is None or b is None:
            return None
        return f"{(a - b) * scale:{fmt}}{suffix}"

    def beyond(key: str) -> bool | None:
        check = None if base is None or noise is None else noise.get(key)
        return None if check is None else check.beyond_noise

    pass_rate, error_rate = _num(run, "pass_rate"), _num(run, "error_rate")
    abstention_rate = _num(run, "abstention_rate")
    cards = [
        Card("Samples", _fmt(_num(run, "samples"), ",.0f"), delta("samples", "+,.0f"), None),
        Card(
            "Error rate",
            _fmt(error_rate, ".1%"),
            delta("error_rate", "+.1f", 100, " pts"),
            beyond("error_rate"),
            lower_is_better=True,
        ),
        Card(
            "Pass rate",
            _fmt(None if pass_rate is None else pass_rate * 100, ".1f", "%"),
            delta("pass_rate", "+.1f", 100, " pts"),
            beyond("pass_rate"),
        ),
        Card(
            "Abstained",
            _fmt(None if abstention_rate is None else abstention_rate * 100, ".1f", "%"),
            delta("abstention_rate", "+.1f", 100, " pts"),
            beyond("abstention_rate"),
            lower_is_better=True,
        ),
        Card(
            "Overall (1-5)",
            _fmt(_num(run, "overall"), ".2f"),
            delta("overall", "+.2f"),
            beyond("overall"),
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
            beyond("latency_mean"),
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
