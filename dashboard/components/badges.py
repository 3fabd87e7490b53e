"""Tier badges and delta arrows (plain text, so they work in tables and CSV alike)."""

from __future__ import annotations

import math

from engine.models import TierThresholds

TIER_COLORS = {"excellent": "#1a9850", "good": "#66bd63", "fair": "#fdae61", "poor": "#d73027"}
"""One colour per tier, shared by badges and charts."""

TIER_ORDER = ("excellent", "good", "fair", "poor")
"""Tiers from best to worst."""

_TIER_ICON = {"excellent": "🟢", "good": "🔵", "fair": "🟡", "poor": "🔴"}


def tier_of(score: float | None, thresholds: TierThresholds | None = None) -> str | None:
    """The tier of a 0-100 score (excellent >= 85, good >= 70, fair >= 50, else poor)."""
    if score is None or math.isnan(score):
        return None
    return (thresholds or TierThresholds()).tier(score)


def tier_badge(score: float | None, thresholds: TierThresholds | None = None) -> str:
    """``🟢 excellent`` style badge of a score; empty for no score."""
    tier = tier_of(score, thresholds)
    return "" if tier is None else f"{_TIER_ICON[tier]} {tier}"


def delta_text(delta: float | None) -> str:
    """``▲ +3.2`` / ``▼ -1.0`` / ``= 0.0``; empty when there is no baseline."""
    if delta is None or math.isnan(delta):
        return ""
    if delta > 0.05:
        return f"▲ {delta:+.1f}"
    if delta < -0.05:
        return f"▼ {delta:+.1f}"
    return f"= {delta:+.1f}"


def delta_color(text: object) -> str:
    """CSS for a delta cell: green up, red down (used with a pandas Styler)."""
    value = str(text)
    if value.startswith("▲"):
        return "color: #1a7f37; font-weight: 600"
    if value.startswith("▼"):
        return "color: #cf222e; font-weight: 600"
    return ""
