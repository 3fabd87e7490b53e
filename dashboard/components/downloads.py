"""CSV download of any table a page shows."""

from __future__ import annotations

import polars as pl
import streamlit as st


def csv_bytes(frame: pl.DataFrame) -> bytes:
    """The frame as UTF-8 CSV; list columns are joined with ``;`` (CSV has no lists)."""
    flat = frame.with_columns(
        pl.col(name).cast(pl.List(pl.String)).list.join(";")
        for name, dtype in frame.schema.items()
        if isinstance(dtype, pl.List)
    )
    return flat.write_csv().encode("utf-8")


def download_csv(frame: pl.DataFrame, file_name: str, *, key: str) -> None:
    """A "Download CSV" button for ``frame``, its CSV written when the button is clicked:
    built on every page run, each table's CSV cost the server a serialisation and a stored
    file per run that nobody downloaded."""
    st.download_button(
        "Download CSV",
        data=lambda: csv_bytes(frame),
        file_name=file_name,
        mime="text/csv",
        key=key,
        icon=":material/download:",
    )
