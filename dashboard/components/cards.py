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
from typing import Any

from dashboard import formats
from dashboard.components.badges import DELTA_BAD, DELTA_GOOD, DELTA_GREY
from dashboard.components.safe import safe_markup
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


CARDS_CLASS = "eh-cards"
"""The class of the cards' box (tests find the cards by it)."""

CARDS_STYLE = (
    f".{CARDS_CLASS}{{display:grid;grid-template-columns:repeat(4,minmax(0,1fr));gap:1rem;"
    "margin-bottom:1rem}"
    f"@media (max-width:640px){{.{CARDS_CLASS}{{grid-template-columns:repeat(2,minmax(0,1fr))}}}}"
    # colours from the text's own, so the cards read the same in the dark theme
    f".{CARDS_CLASS}>div{{border:1px solid color-mix(in srgb,currentColor 20%,transparent);"
    "border-radius:.5rem;padding:.75rem 1rem}"
    f".{CARDS_CLASS} .label{{font-size:.875rem}}"
    # the number shrinks with the window: "100.0%" fits a quarter of the page at 1024 px
    f".{CARDS_CLASS} .value{{font-size:clamp(1.5rem,2.6vw,2.25rem);line-height:1.3;"
    "white-space:nowrap;overflow:hidden;text-overflow:ellipsis}"
    f".{CARDS_CLASS} .verdict{{font-size:.875rem;opacity:.65}}"
)
"""Four cards a row (a number like "1,234 (12.5%)" needs a quarter of the page at 1440 px),
two on a phone; the look of Streamlit's bordered metrics."""


def card_delta_css(card: Card) -> str:
    """The colour of a card's change: green when it went the good way, red the bad way,
    grey when within noise or unchecked (as every table's Δ, ``badges.delta_color``)."""
    if card.delta is None or card.beyond_noise is not True:
        return f"color:{DELTA_GREY}"
    down = card.delta.lstrip().startswith(("-", "−"))
    good = down if card.lower_is_better else not down
    return f"color:{DELTA_GOOD if good else DELTA_BAD};font-weight:600"


def cards_html(cards: list[Card]) -> str:
    """The cards as one line of HTML: each card's label, number, change (an arrow and the
    signed change, only when it is a change) and noise verdict; the verdict again as the
    card's tooltip. Labels and numbers are the code's own; still escaped."""
    parts = []
    for card in cards:
        delta = ""
        if changed(card.delta):
            arrow = "▼" if str(card.delta).lstrip().startswith(("-", "−")) else "▲"
            delta = (
                f'<div class="delta" style="{card_delta_css(card)}">'
                f"{arrow} {safe_markup(card.delta)}</div>"
            )
        parts.append(
            _card(
                f"Change against the baseline: {card.verdict()}.",
                card.label,
                card.value,
                f'{delta}<div class="verdict">{safe_markup(card.verdict())}</div>',
            )
        )
    return _cards(parts)


def _card(tip: str, label: str, value: str, rest: str = "") -> str:
    """One card: its tooltip, label and number escaped, then ``rest`` (markup) under them."""
    return (
        f'<div title="{safe_markup(tip)}"><div class="label">{safe_markup(label)}</div>'
        f'<div class="value">{safe_markup(value)}</div>{rest}</div>'
    )


def _cards(parts: list[str]) -> str:
    return f'<div class="{CARDS_CLASS}"><style>{CARDS_STYLE}</style>{"".join(parts)}</div>'


def show_run_cards(cards: list[Card]) -> None:
    """Draw the cards: one Markdown element, not eight ``st.metric`` (their code is nine
    more files for a first visit to load, and 16 elements to draw)."""
    import streamlit as st

    st.markdown(cards_html(cards), unsafe_allow_html=True)


def count_cards_html(counts: list[tuple[str, int, str]]) -> str:
    """Cards of plain counts, ``(label, count, tooltip)`` each, in the run cards' look."""
    return _cards([_card(tip, label, f"{count:,}") for label, count, tip in counts])


def show_count_cards(counts: list[tuple[str, int, str]]) -> None:
    """Draw ``count_cards_html`` on the page."""
    import streamlit as st

    st.markdown(count_cards_html(counts), unsafe_allow_html=True)
