"""Switches and ranges in the URL: a page opened with them shows them, a change is written
back, and a value left at its default adds nothing to the link."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from engine.settings import Paths
from tests.dashboard.conftest import AppFactory


def test_only_changes_beyond_noise_round_trips(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home, run="r2", beyond="1")
    assert at.toggle(key="overview_beyond_only").value is True
    assert at.query_params.get("beyond") == "1"
    at.toggle(key="overview_beyond_only").set_value(False).run()
    assert "beyond" not in at.query_params
    at.toggle(key="overview_beyond_only").set_value(True).run()
    assert at.query_params.get("beyond") == "1"
    again = app(fixture_home, **{k: at.query_params[k] for k in at.query_params})
    assert again.toggle(key="overview_beyond_only").value is True


def test_fit_the_axis_round_trips(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home, page="trends")
    assert at.toggle(key="trends_fit").value is True and "fit" not in at.query_params
    at.toggle(key="trends_fit").set_value(False).run()
    assert at.query_params.get("fit") == "0"
    again = app(fixture_home, page="trends", fit="0")
    assert again.toggle(key="trends_fit").value is False
    assert app(fixture_home, page="trends", fit="nonsense").toggle(key="trends_fit").value


def _range_page() -> None:
    import streamlit as st

    from dashboard.components.url_state import range_param, set_url, url_range

    bounds = st.slider("Between", 0.0, 100.0, url_range("range", 0.0, 100.0), key="r")
    set_url(range=range_param(bounds, 0.0, 100.0))


def test_a_metric_range_round_trips() -> None:
    at = AppTest.from_function(_range_page)
    at.query_params["range"] = "70,20"  # out of order: read in order
    at.run()
    assert at.slider(key="r").value == (20.0, 70.0)
    assert at.query_params.get("range") == "20,70"
    at.slider(key="r").set_range(35.0, 100.0).run()
    assert at.query_params.get("range") == "35,100"
    at.slider(key="r").set_range(0.0, 100.0).run()
    assert "range" not in at.query_params
    for bad, read in (("x,1", (0.0, 100.0)), ("-5,250", (0.0, 100.0)), ("nan,3", (0.0, 100.0))):
        at = AppTest.from_function(_range_page)
        at.query_params["range"] = bad
        at.run()
        assert at.slider(key="r").value == read, bad


def test_the_finder_metric_range_round_trips(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home, page="sample", run="r2", metric="accuracy", range="20,60")
    assert at.selectbox(key="sample_metric").value == "accuracy"
    assert at.slider(key="sample_range").value == (20.0, 60.0)
    at.slider(key="sample_range").set_range(40.0, 100.0).run()
    assert at.query_params.get("range") == "40,100"
    again = app(fixture_home, page="sample", **{k: at.query_params[k] for k in at.query_params})
    assert again.slider(key="sample_range").value == (40.0, 100.0)
    # with no metric chosen, no range is kept in the link
    at.selectbox(key="sample_metric").set_value("").run()
    assert "range" not in at.query_params
    assert not [s for s in at.slider if s.key == "sample_range"]  # the range needs a metric
    at.selectbox(key="sample_metric").set_value("accuracy").run()
    low, high = at.slider(key="sample_range").value  # back, and the link says what it shows
    assert at.query_params.get("range") == (
        None if (low, high) == (0, 100) else f"{low:g},{high:g}"
    )
