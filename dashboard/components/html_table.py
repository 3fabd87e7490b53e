"""Small tables drawn as HTML through Markdown, not as the data grid.

The data grid (``st.dataframe``) is 34 JavaScript files, 1.7 MB, that a browser loads and
compiles on the first page that draws one: on a 2-core machine the Overview's first visit
took 1.83 s with its two grids and 1.50 s without them (``tests.bench.first_visit``). A
table of a few dozen rows that a reader scans rather than sorts (the Overview's per-domain
scores, its movers) needs none of it: this is a plain ``<table>``, styled by the page's own
Markdown rules, its cells coloured inline, its header kept in sight while a long table
scrolls inside its box. Every string from data is escaped (``safe_markup``), and the whole
table is one line, so Markdown never reads anything inside it as Markdown.

The HTML report (``dashboard.report``) writes its tables with the same function.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from dashboard import formats
from dashboard.components.safe import safe_markup

MAX_HEIGHT_PX = 440
"""A longer table scrolls inside a box this tall (about 12 rows, as the grid did)."""

TABLE_CLASS = "eh-table"
"""The class of every table's box (tests and the browser checks find tables by it)."""

STYLE = (
    f".{TABLE_CLASS} table{{font-size:.875rem}}"
    f".{TABLE_CLASS} th,.{TABLE_CLASS} td{{padding:.3rem .5rem}}"
    # Canvas follows the app's light or dark theme (Streamlit sets its color-scheme)
    f".{TABLE_CLASS} th{{position:sticky;top:0;z-index:1;"
    "background:color-mix(in srgb,currentColor 7%,Canvas);text-align:left;"
    "vertical-align:bottom}"
    f".{TABLE_CLASS} td.n{{text-align:right;font-variant-numeric:tabular-nums;"
    "white-space:nowrap}"
    f".{TABLE_CLASS} td a{{white-space:nowrap}}"
    f".{TABLE_CLASS} td.w{{min-width:14rem}}"
    f".{TABLE_CLASS} td.k{{white-space:nowrap}}"
)
"""Rows as dense as the grid's; the header kept opaque (rows scrolled under it do not show
through); numbers lined up on their last digit."""

LINK_SCHEMES = ("http://", "https://", "/", "?", "#")
"""What a link cell may point to (not ``//host``, another site); anything else
(``javascript:``) is drawn as text."""


@dataclass(frozen=True)
class Column:
    """How one column is drawn."""

    label: str | None = None
    """The header's text; the frame's column name when None."""
    help: str = ""
    """The header's tooltip."""
    link: str | None = None
    """The cells are addresses, drawn as links with this text (an empty cell stays empty)."""
    number: str = ""
    """A format spec for the column's numbers (``.1f``, ``+.1f``) or a printf format
    (``$%.4f``, as the grid's column configs have them); when empty, ``str`` for whole
    numbers and ``formats.plain_number`` for others."""
    align_right: bool | None = None
    """Right-aligned, as numbers are; None: when the column holds numbers."""
    css: Callable[[object, int], str] | None = None
    """A cell's inline CSS from its value and its row's index (tier pills, Δ colours)."""
    wide: bool = False
    """Long text (a claim, a query): never squeezed below a readable width; the table
    scrolls sideways instead."""
    whole: bool = False
    """An identifier (``acme-q1``): never broken across lines at its hyphens."""


def _cell_text(value: object, column: Column) -> str:
    if value is None:
        return formats.NA
    if isinstance(value, float) and value != value:  # NaN: what polars gives for 0/0
        return formats.NA
    if isinstance(value, int | float) and not isinstance(value, bool) and column.number:
        return column.number % value if "%" in column.number else format(value, column.number)
    if isinstance(value, float):
        return formats.plain_number(value)
    return formats.text(value)


def _cell(value: object, row: int, column: Column, right: bool) -> str:
    css = "" if column.css is None else column.css(value, row)
    kind = "n" if right else "w" if column.wide else "k" if column.whole else ""
    attributes = (f' class="{kind}"' if kind else "") + (
        f' style="{safe_markup(css)}"' if css else ""
    )
    address = str(value or "")
    if column.link is not None and address.startswith(LINK_SCHEMES) and address[:2] != "//":
        inner = f'<a href="{safe_markup(address)}" target="_blank">{safe_markup(column.link)}</a>'
    else:
        # one line: a blank line would end Markdown's HTML block and show the rest as text
        inner = safe_markup(" ".join(_cell_text(value, column).split()))
    return f"<td{attributes}>{inner}</td>"


def _header(name: str, column: Column) -> str:
    tip = f' title="{safe_markup(column.help)}"' if column.help else ""
    # a short label keeps the frame's name beside it (what tests and the CSV call it)
    named = f' data-column="{safe_markup(name)}"' if column.label and column.label != name else ""
    return f"<th{tip}{named}>{safe_markup(column.label or name)}</th>"


def table_html(
    frame: pl.DataFrame,
    columns: Mapping[str, Column] | None = None,
    *,
    order: Sequence[str] | None = None,
    name: str = "",
    max_height_px: int | None = MAX_HEIGHT_PX,
) -> str:
    """``frame`` as one line of HTML: the columns of ``order`` (all, by default) drawn as
    ``columns`` says; ``name`` marks the table (``data-table``) for tests and links;
    ``max_height_px`` None draws every row (the report: a page that is printed)."""
    config = columns or {}
    shown = [c for c in (order or frame.columns) if c in frame.columns]
    drawn = [(c, config.get(c, Column())) for c in shown]
    right = {
        c: col.align_right if col.align_right is not None else frame.schema[c].is_numeric()
        for c, col in drawn
    }
    head = "".join(_header(c, col) for c, col in drawn)
    body = "".join(
        "<tr>" + "".join(_cell(row[c], i, col, right[c]) for c, col in drawn) + "</tr>"
        for i, row in enumerate(frame.select(shown).iter_rows(named=True))
    )
    box = "margin-bottom:1rem" + (
        f";max-height:{max_height_px}px;overflow:auto" if max_height_px is not None else ""
    )
    return (
        f'<div class="{TABLE_CLASS}" data-table="{safe_markup(name)}" style="{box}">'
        f"<style>{STYLE}</style>"
        '<table style="width:100%;margin:0">'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
    )


def show_table(
    frame: pl.DataFrame,
    columns: Mapping[str, Column] | None = None,
    *,
    order: Sequence[str] | None = None,
    name: str,
    max_height_px: int | None = MAX_HEIGHT_PX,
) -> None:
    """Draw ``table_html`` on the page."""
    import streamlit as st

    markup = table_html(frame, columns, order=order, name=name, max_height_px=max_height_px)
    st.markdown(markup, unsafe_allow_html=True)
