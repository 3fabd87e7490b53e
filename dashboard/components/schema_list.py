"""The SQL page's schema: every table and view with its columns, as one element."""

from __future__ import annotations

import polars as pl

from dashboard.components.safe import safe_markup


def schema_html(schema: pl.DataFrame) -> str:
    """Each object of ``schema`` (``q.schema_columns``) as a disclosure (``<details>``)
    listing its columns and their types, names escaped."""
    parts = []
    for (obj, kind), cols in schema.group_by(["object", "kind"], maintain_order=True):
        rows = "".join(
            f"<tr><td><code>{safe_markup(column)}</code></td><td>{safe_markup(type_)}</td></tr>"
            for column, type_ in cols.select("column", "type").iter_rows()
        )
        parts.append(
            f"<details><summary>{safe_markup(obj)} ({safe_markup(kind)})</summary>"
            f"<table>{rows}</table></details>"
        )
    return "".join(parts)
