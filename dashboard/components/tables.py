"""Display forms of tables: badges, arrows and colours for ``st.dataframe``."""

from __future__ import annotations

from typing import Any

import polars as pl

from dashboard.components.badges import delta_color, delta_text, tier_badge

METRIC_TITLES = {
    "accuracy": "Accuracy",
    "completeness": "Completeness",
    "attribution": "Attribution",
}


def overview_display(frame: pl.DataFrame) -> pl.DataFrame:
    """The Overview table as shown: score, tier badge, Δ arrow and noise verdict per metric."""
    columns: dict[str, list[Any]] = {
        "Domain": list(frame["domain"]),
        "Samples": list(frame["samples"]),
        "Errors": list(frame["errors"]),
    }
    for metric, title in METRIC_TITLES.items():
        means = list(frame[f"{metric}_mean"])
        columns[title] = [None if v is None else round(float(v), 1) for v in means]
        columns[f"{title} tier"] = [tier_badge(v) for v in means]
        columns[f"{title} Δ"] = [delta_text(v) for v in frame[f"{metric}_delta"]]
        columns[f"{title} noise"] = list(frame[f"{metric}_noise"])
    return pl.DataFrame(columns, strict=False)


def overview_styled(frame: pl.DataFrame) -> Any:
    """The Overview table as a pandas Styler with green/red deltas."""
    shown = overview_display(frame).to_pandas()
    delta_cols = [c for c in shown.columns if c.endswith(" Δ")]
    return shown.style.map(delta_color, subset=delta_cols).format(
        {t: "{:.1f}" for t in METRIC_TITLES.values()}, na_rep="—"
    )
