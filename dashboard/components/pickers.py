"""Labels for run pickers."""

from __future__ import annotations

import polars as pl


def run_label(runs: pl.DataFrame) -> dict[str, str]:
    """``run_id -> "name · 2026-11-08 · run_id"`` for select boxes."""
    out: dict[str, str] = {}
    for row in runs.select("run_id", "name", "started_at").iter_rows():
        run_id, name, started = row
        when = started.strftime("%Y-%m-%d %H:%M") if started is not None else "?"
        out[str(run_id)] = f"{name} · {when} · {run_id}"
    return out
