"""What tables show: a null cell reads the same dash on every page (never the grid's
default "None"), numbers in the one format of their scale."""

from __future__ import annotations

import io
from typing import Any

import pandas as pd
import polars as pl
import pyarrow as pa
from streamlit.testing.v1 import AppTest

from dashboard.components import tables
from engine.settings import Paths
from tests.dashboard.conftest import AppFactory


def shown(at: AppTest) -> list[pd.DataFrame]:
    """The display text of every data grid on the page (what the browser draws)."""
    out = []
    for frame in at.dataframe:
        styler = frame.proto.arrow_data.styler
        if not styler.display_values:
            # drawn raw (a fixed table of strings): fine only when it holds no null
            raw = frame.value
            assert not raw.isna().to_numpy().any(), list(raw.columns)
            out.append(raw.astype(str))
            continue
        out.append(pa.ipc.open_stream(io.BytesIO(styler.display_values)).read_pandas())
    return out


def cells(frames: list[pd.DataFrame]) -> set[str]:
    return {str(v) for f in frames for v in f.to_numpy().ravel()}


def test_styled_formats_nulls_numbers_lists_and_dates() -> None:
    frame = pl.DataFrame(
        {
            "accuracy": [81.25, None],
            "judge_faithfulness": [4.0, None],
            "cost_usd": [0.00123, None],
            "latency_ms": [1234.5, None],
            "samples": [3, None],
            "flags": [["abstained", "empty_response"], None],
            "error": [None, "timed out"],
        }
    )
    styler = tables.styled(frame)
    html = styler.to_html()
    for text in ("81.2", "4.00", "$0.0012", "1,234.5", "abstained, empty_response", "timed out"):
        assert text in html, text
    assert "None" not in html and "nan" not in html
    assert html.count(tables.MISSING) == 7  # one per null cell


def test_big_frames_are_drawn_raw() -> None:
    frame = pl.DataFrame({"x": list(range(tables.STYLE_MAX_CELLS + 1))})
    assert isinstance(tables.styled(frame), pd.DataFrame)


def _assert_no_none(at: AppTest) -> set[str]:
    texts = cells(shown(at))
    assert "None" not in texts and "nan" not in texts and "NaN" not in texts
    return texts


def test_sample_listing_shows_a_dash_for_a_failed_sample(
    app: AppFactory, fixture_home: Paths
) -> None:
    at = app(fixture_home, "sample", run="r2")
    at.selectbox(key="sample_domain").set_value("beta.example").run()
    listing = shown(at)[0]
    failed = listing[listing["sample_id"] == "beta-q2"].iloc[0]
    assert (failed["accuracy"], failed["error"]) == (tables.MISSING, "judge timed out")
    ok = listing[listing["sample_id"] == "beta-q1"].iloc[0]
    assert (ok["accuracy"], ok["error"]) == ("60.0", tables.MISSING)
    _assert_no_none(at)


def test_no_page_shows_none(app: AppFactory, fixture_home: Paths) -> None:
    pages: list[tuple[str, dict[str, Any]]] = [
        ("compare", {}),
        ("claims", {}),
        ("attribution", {}),
        ("runs", {}),
        ("trends", {}),
        ("sample", {"run": "r2", "sample": "acme-q1", "iteration": "1"}),
    ]
    for page, query in pages:
        at = app(fixture_home, page, **query)
        assert at.dataframe, page
        _assert_no_none(at)
    # trends: beta has no score in rc, the pivot cell is null -> the dash
    at = app(fixture_home, "trends")
    assert tables.MISSING in cells(shown(at))
