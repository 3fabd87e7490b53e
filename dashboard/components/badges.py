"""Tier badges and delta arrows: plain text (so they work in tables and CSV alike), coloured
with CSS by the table styler. No emoji: without an emoji font they render as boxes."""

from __future__ import annotations

import math

from engine.models import TierThresholds

TIER_COLORS = {"excellent": "#1a9850", "good": "#66bd63", "fair": "#fdae61", "poor": "#d73027"}
"""One colour per tier, shared by badges and charts."""

TIER_ORDER = ("excellent", "good", "fair", "poor")
"""Tiers from best to worst."""

TIER_BACKGROUNDS = {
    "excellent": "#d9f0d3",
    "good": "#e5f5e0",
    "fair": "#fee8c8",
    "poor": "#fcd5d0",
}
"""Light cell backgrounds of the tier pills (dark text stays readable on them)."""


def tier_of(score: float | None, thresholds: TierThresholds | None = None) -> str | None:
    """The tier of a 0-100 score (excellent >= 85, good >= 70, fair >= 50, else poor)."""
    if score is None or math.isnan(score):
        return None
    return (thresholds or TierThresholds()).tier(score)


def tier_badge(score: float | None, thresholds: TierThresholds | None = None) -> str:
    """The tier name of a score (``excellent``); empty for no score. Tables colour it with
    ``tier_style``."""
    tier = tier_of(score, thresholds)
    return "" if tier is None else tier


def tier_style(text: object) -> str:
    """CSS of a tier cell: the tier's light background and a left bar in its colour."""
    tier = str(text)
    if tier not in TIER_BACKGROUNDS:
        return ""
    return (
        f"background-color: {TIER_BACKGROUNDS[tier]}; color: #1f2328; "
        f"border-left: 4px solid {TIER_COLORS[tier]}"
    )


def delta_text(delta: float | None) -> str:
    """``▲ +3.2`` / ``▼ -1.0`` / ``= 0.0``; empty when there is no baseline."""
    if delta is None or math.isnan(delta):
        return ""
    if delta > 0.05:
        return f"▲ {delta:+.1f}"
    if delta < -0.05:
        return f"▼ {delta:+.1f}"
    return f"= {delta:+.1f}"


DELTA_GOOD = "#1a7f37"
"""A change beyond noise the good way."""

DELTA_BAD = "#cf222e"
"""A change beyond noise the bad way."""

DELTA_GREY = "#6e7781"
"""A change within noise, or with no noise verdict."""


def delta_color(text: object, beyond_noise: bool | None = True) -> str:
    """CSS for a delta cell: green up, red down, and grey when the change is within noise or
    has no noise verdict (``beyond_noise`` not True): colour says "this is real"."""
    value = str(text)
    if not value:
        return ""
    if beyond_noise is not True:
        return f"color: {DELTA_GREY}"
    if value.startswith("▲"):
        return f"color: {DELTA_GOOD}; font-weight: 600"
    if value.startswith("▼"):
        return f"color: {DELTA_BAD}; font-weight: 600"
    return ""


def tier_legend_html(thresholds: TierThresholds | None = None) -> str:
    """The tier pills with the run's thresholds, as HTML (numbers and fixed words only)."""
    t = thresholds or TierThresholds()
    bounds = {
        "excellent": f"≥ {t.excellent:g}",
        "good": f"≥ {t.good:g}",
        "fair": f"≥ {t.fair:g}",
        "poor": f"< {t.fair:g}",
    }
    pills = " ".join(
        f'<span style="{tier_style(tier)}; padding: 1px 8px; border-radius: 3px; '
        f'margin-right: 6px; font-size: 0.875rem">{tier} {bounds[tier]}</span>'
        for tier in TIER_ORDER
    )
    return f'<div class="eh-tier-legend">Tiers of this run: {pills}</div>'


def tier_legend(thresholds: TierThresholds | None = None) -> None:
    """Draw ``tier_legend_html`` on the page (through Markdown: ``st.html`` would make the
    Overview's first visit load its sanitiser's code too)."""
    import streamlit as st

    st.markdown(tier_legend_html(thresholds), unsafe_allow_html=True)
