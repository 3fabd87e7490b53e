"""Display forms of tables: human labels, one number format, tier names and delta arrows
(coloured by the page, only when beyond noise), for ``st.dataframe`` and the HTML tables."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import polars as pl

from dashboard import formats
from dashboard.components.badges import delta_color, delta_text, tier_badge, tier_style
from dashboard.components.html_table import Column
from engine.models import ANALYZER_METRICS, TierThresholds
from engine.models.metrics import METRICS, RATE, RUBRIC, TO_100_SUFFIX
from warehouse.queries import EXTRA_PREFIXES, METRIC_LABELS, metric_label

METRIC_TITLES = METRIC_LABELS

MISSING = formats.NA
"""What every table shows for a null cell (never the grid's default ``None``)."""

STYLE_MAX_CELLS = 100_000
"""Tables up to this many cells get display formats; bigger ones (analyst SQL) are drawn
raw, because styling every cell would take seconds."""

OVERVIEW_COLUMNS = (
    "Domain", "Metric", "Score", "Tier", "Δ", "Noise", "Samples", "Errors", "Abstained %",
)  # fmt: skip
"""The Overview table, one row per domain and metric: a new metric adds rows, never a
column, so the key columns stay on screen at 1440 px."""

OVERVIEW_SHORT = ("Domain", "Metric", "Score", "Δ", "Noise")
"""The Overview table's columns shown by default, in this order: the change and its noise
verdict stay in sight at 1024 px; the others are behind "All columns"."""


def human_label(column: str) -> str:
    """``mean_delta`` -> ``Mean Δ``; ``found_percent`` -> ``Found %`` (column headers)."""
    words = column.split("_")
    out = []
    for word in words:
        if word == "delta":
            out.append("Δ")
        elif word in ("percent", "pct"):
            out.append("%")
        elif word in ("id", "ai", "url", "rag", "usd"):
            out.append(word.upper())
        else:
            out.append(word)
    text = " ".join(out)
    return text[:1].upper() + text[1:]


def human_columns(frame: pl.DataFrame) -> dict[str, str]:
    """Column config labels for every column of ``frame``: ``{"mean_delta": "Mean Δ", ...}``."""
    return {c: human_label(c) for c in frame.columns}


def overview_display(
    frame: pl.DataFrame, thresholds: TierThresholds | None = None, *, only_beyond: bool = False
) -> tuple[pl.DataFrame, list[bool | None]]:
    """The Overview table as shown (``OVERVIEW_COLUMNS``) and, per row, whether its Δ is
    beyond noise. Tiers use the run's own ``thresholds``. Every metric in its 0-100 form,
    each grader's (``grader:<id>``, score x 100) and retrieval metric's
    (``retrieval:<metric>``) after them; a metric neither run has (no judge, no RAG, no
    grader) gets no row; with ``only_beyond``, only rows whose Δ is beyond noise."""
    rows: list[dict[str, Any]] = []
    beyond: list[bool | None] = []
    graders = [
        c.removesuffix("_mean")
        for c in frame.columns
        if c.startswith(EXTRA_PREFIXES) and c.endswith("_mean")
    ]
    titles = {**METRIC_TITLES, **{g: metric_label(g) for g in graders}}
    for rec in frame.iter_rows(named=True):
        for metric, title in titles.items():
            mean = rec[f"{metric}_mean"]
            if mean is None and rec[f"baseline_{metric}_mean"] is None:
                continue
            if only_beyond and not rec.get(f"{metric}_beyond_noise"):
                continue
            rows.append(
                {
                    "Domain": rec["domain"],
                    "Metric": title,
                    "Score": None if mean is None else round(float(mean), 1),
                    "Tier": tier_badge(mean, thresholds),
                    "Δ": delta_text(rec[f"{metric}_delta"]),
                    "Noise": rec[f"{metric}_noise"],
                    "Samples": rec["samples"],
                    "Errors": rec["errors"],
                    "Abstained %": _round(rec.get("abstention_rate")),
                }
            )
            beyond.append(rec.get(f"{metric}_beyond_noise"))
    schema = {
        "Domain": pl.String,
        "Metric": pl.String,
        "Score": pl.Float64,
        "Tier": pl.String,
        "Δ": pl.String,
        "Noise": pl.String,
        "Samples": pl.Int64,
        "Errors": pl.Int64,
        "Abstained %": pl.Float64,
    }
    return pl.DataFrame(rows, schema=schema), beyond


def overview_columns(beyond: Sequence[bool | None]) -> dict[str, Column]:
    """How the Overview table (``overview_display``) is drawn, on the page and in the HTML
    report: tier pills, Δ coloured only beyond noise (``beyond``, per row), short labels for
    the counts with their names in tooltips."""
    return {
        "Score": Column(number=".1f"),
        "Tier": Column(css=lambda tier, _row: tier_style(tier)),
        "Δ": Column(align_right=True, css=lambda delta, row: delta_color(delta, beyond[row])),
        "Noise": Column(help="95% interval of Δ: beyond noise when it excludes zero"),
        "Samples": Column("n", help="Samples"),
        "Errors": Column("Err.", help="Samples with an error"),
        "Abstained %": Column("Abst. %", number=".1f", help="Share of answers empty or declined"),
    }


VERDICT_COLUMNS = {"Δ": Column(number="+.1f")}
"""How the verdict's movers (``verdict.verdict_rows``) are drawn: Δ signed."""


def _round(value: object) -> float | None:
    return None if value is None else round(float(str(value)), 1)


_ZERO_TO_HUNDRED = (*ANALYZER_METRICS, "score", "delta", "percent")
_ONE_TO_FIVE = tuple(name for name, m in METRICS.items() if m.scale is RUBRIC)
_ZERO_TO_ONE = (
    *(name for name, m in METRICS.items() if m.scale is RATE),
    "similarity",
    "weight",
)
_WIDE_TEXT = (
    "claim_text",
    "query",
    "question",
    "evidence",
    "reason",
    "reasoning",
    "response",
    "matched_text",
)


def _number_format(column: str) -> str | None:
    if column.endswith("cost_usd"):
        return formats.COST_PRINTF
    if column.endswith(TO_100_SUFFIX):  # a metric's 0-100 form (result_scores)
        return formats.score_printf(0, 100)
    # 1-5 and 0-1 before 0-100: "judge_completeness" is on 1-5, "completeness" on 0-100
    if any(column.startswith(p) or column == p for p in _ONE_TO_FIVE):
        return formats.score_printf(1, 5)
    if any(column.endswith(p) for p in _ZERO_TO_ONE):
        return formats.score_printf(0, 1)
    if any(p in column for p in _ZERO_TO_HUNDRED):
        return formats.score_printf(0, 100)
    return None


def column_config(frame: pl.DataFrame, **overrides: Any) -> dict[str, Any]:
    """``st.dataframe`` column config of a warehouse frame: human labels, the one number
    format per scale, long text columns wide, and ``overrides`` by column name."""
    import streamlit as st

    out: dict[str, Any] = {}
    for name, dtype in frame.schema.items():
        label = human_label(name)
        fmt = _number_format(name)
        if dtype.is_float() and fmt is not None:
            out[name] = st.column_config.NumberColumn(label, format=fmt)
        elif name in _WIDE_TEXT:
            out[name] = st.column_config.TextColumn(label, width="medium")
        else:
            out[name] = label
    out.update(overrides)
    return out


def _printf(fmt: str) -> Callable[[object], str]:
    """A column_config printf format (``%.1f``, ``$%.4f``) as a Styler formatter."""
    return lambda v: fmt % v


def _formatter(name: str, dtype: pl.DataType) -> Callable[[object], str] | None:
    if dtype == pl.Boolean:
        return None  # drawn as a checkbox: the grid ignores display text there
    if dtype.is_float():
        fmt = _number_format(name)
        return _printf(fmt) if fmt is not None else formats.plain_number
    if dtype.is_integer():
        return str
    return formats.text


def styled(frame: pl.DataFrame, formats: dict[str, str] | None = None) -> Any:
    """``frame`` as a pandas Styler that shows every null as ``MISSING`` and each number in
    the one format of its scale (``formats`` overrides by column, printf style). Frames over
    ``STYLE_MAX_CELLS`` cells come back unstyled."""
    table = frame.to_pandas()
    if frame.width * frame.height > STYLE_MAX_CELLS:
        return table
    given = formats or {}
    fmts: dict[str, Callable[[object], str]] = {}
    for name, dtype in frame.schema.items():
        fn = _printf(given[name]) if name in given else _formatter(name, dtype)
        if fn is not None:
            fmts[name] = fn
    return table.style.format(fmts, na_rep=MISSING)


FINDER_FIRST = ("sample_id", "accuracy", "completeness", "attribution", "answer", "domain")
"""The sample finder's columns in front: the scores right after the sample, before the
long query (at 1024 px the query pushed them out of sight)."""


def scores_first(frame: pl.DataFrame, first: Iterable[str] = FINDER_FIRST) -> pl.DataFrame:
    """``frame`` with the columns of ``first`` it has in front, in that order."""
    front = [c for c in first if c in frame.columns]
    return frame.select(*front, pl.exclude(*front))


def finder_columns() -> dict[str, Any]:
    """Column configs of the sample finder: the sample pinned, the scores narrow under
    short labels (their full names in tooltips), so that they stay in sight at 1024 px."""
    import streamlit as st

    def score(label: str, name: str) -> Any:
        return st.column_config.Column(label, help=f"{name} (0-100)", width=60)

    return {
        "sample_id": st.column_config.TextColumn("Sample ID", pinned=True),
        "accuracy": score("Acc.", "Accuracy"),
        "completeness": score("Compl.", "Completeness"),
        "attribution": score("Attr.", "Attribution"),
        "answer": st.column_config.TextColumn("Answer", width=90),
        "iteration": st.column_config.Column("Iter.", help="Iteration", width="small"),
    }


def grid(data: Any, **options: Any) -> Any:
    """``st.dataframe`` as every table of the dashboard draws: no index column, and a null
    cell as ``MISSING`` (the browser grid's own default is "None"). ``options`` are
    ``st.dataframe``'s (column_config, key, height, ...)."""
    import streamlit as st

    return st.dataframe(data, hide_index=True, placeholder=MISSING, **options)


def show_html(frame: pl.DataFrame, *, name: str, **labels: str | Column) -> None:
    """Draw a warehouse frame as an HTML table (``html_table``), as ``show`` draws it as a
    grid: human labels, the one number format per scale, ``formats.NA`` for nulls;
    ``labels`` override a column's header (a string) or its whole drawing (a ``Column``)."""
    from dashboard.components.html_table import show_table

    columns: dict[str, Column] = {}
    for column, dtype in frame.schema.items():
        given = labels.get(column)
        if isinstance(given, Column):
            columns[column] = given
            continue
        fmt = _number_format(column) if dtype.is_float() else None
        columns[column] = Column(
            given or human_label(column),
            number=fmt or "",
            wide=column in _WIDE_TEXT,
            whole=column.endswith("_id"),
        )
    show_table(frame, columns, name=name)


def show(
    frame: pl.DataFrame,
    *,
    key: str | None = None,
    formats: dict[str, str] | None = None,
    height: int | None = None,
    **overrides: Any,
) -> None:
    """Draw a warehouse frame: human labels, one number format per scale, ``MISSING`` for
    nulls; ``overrides`` are column configs by name, ``formats`` printf formats by name."""

    grid(
        styled(frame, formats),
        column_config=column_config(frame, **overrides),
        key=key,
        height=height if height is not None else "auto",
    )
