"""The SQL page's schema: every table and view with its columns, as one element."""

from __future__ import annotations

import polars as pl

from dashboard.components.safe import safe_markup

KIND_HEADINGS = {"table": "Tables", "view": "Views"}


def schema_html(schema: pl.DataFrame) -> str:
    """The objects of ``schema`` (``q.schema_columns``) under one heading per kind, each a
    disclosure (``<details>``) listing its columns and their types, names escaped."""
    parts = []
    for (kind,), objects in schema.group_by(["kind"], maintain_order=True):
        heading = KIND_HEADINGS.get(str(kind), str(kind).capitalize() + "s")
        parts.append(f"<p><strong>{safe_markup(heading)}</strong></p>")
        for (obj,), cols in objects.group_by(["object"], maintain_order=True):
            rows = "".join(
                f"<tr><td><code>{safe_markup(c)}</code></td><td>{safe_markup(t)}</td></tr>"
                for c, t in cols.select("column", "type").iter_rows()
            )
            parts.append(
                f"<details><summary>{safe_markup(obj)}</summary><table>{rows}</table></details>"
            )
    return "".join(parts)
