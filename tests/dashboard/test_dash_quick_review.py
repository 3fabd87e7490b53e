"""Thumbs and a comment from the lists (the Sample finder and Compare): saved as ordinary
response reviews, counted on Judge agreement, and shown as the reviewer's current label."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.components.side_by_side import SIDE_BY_SIDE_OPEN
from engine.lake import list_parts
from engine.settings import Paths
from ingest import ingest
from tests.dashboard.conftest import AppFactory, open_expanders, table
from tests.dashboard.fixture_home import build_fixture_home
from warehouse.queries import Warehouse


@pytest.fixture
def own_home(tmp_path: Path) -> Paths:
    return build_fixture_home(tmp_path / "home")


def _form_key(at: AppTest, start: str) -> str:
    keys = [f.key for f in at.feedback if f.key and f.key.startswith(start)]
    assert len(keys) == 1, keys
    return str(keys[0]).removesuffix("_thumbs")


def test_thumbs_down_from_the_finder_is_a_review(app: AppFactory, own_home: Paths) -> None:
    at = app(own_home, "sample", run="r2")
    at.text_input(key="sample_search").set_value("open on sundays").run()
    prefix = _form_key(at, "finder_review_r2_acme-q1_1_")
    at.feedback(key=f"{prefix}_thumbs").set_value(0)
    at.text_input(key=f"{prefix}_comment").input("Wrong: closed on Sundays")
    at.text_input(key=f"{prefix}_reviewer").input("Sam")
    next(b for b in at.button if b.label == "Save").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("acme-q1 is incorrect, by Sam" in s.value for s in at.success)
    assert len(list_parts(own_home.lake, ["reviews"])) == 1

    ingest(own_home)
    rows = (
        Warehouse(own_home.warehouse)
        .sql("SELECT item, label, machine_label, comment, reviewer FROM reviews")
        .frame
    )
    assert rows.to_dicts() == [
        {
            "item": "response",
            "label": "incorrect",
            "machine_label": "fail",
            "comment": "Wrong: closed on Sundays",
            "reviewer": "Sam",
        }
    ]
    # the same session: the name is remembered and the label shows on the sample's form
    at.switch_page("app_pages/sample.py")
    at.query_params.update({"run": "r2", "sample": "acme-q1", "iteration": "1"})
    at.run()
    assert at.radio(key="review_r2_acme-q1_1__response").value == "incorrect"
    assert at.text_input(key="review_r2_acme-q1_1__reviewer").value == "Sam"
    agreement = app(own_home, "agreement")
    rubric = {r["metric"]: r for r in table(agreement, "kappa")}
    assert rubric["Rubric pass (reviewer: correct = pass)"]["n"] == 1


def test_saving_without_thumbs_is_refused(app: AppFactory, own_home: Paths) -> None:
    at = app(own_home, "sample", run="r2")
    prefix = _form_key(at, "finder_review_r2_")
    at.text_input(key=f"{prefix}_reviewer").input("Sam")
    next(b for b in at.button if b.label == "Save").click().run()
    assert any("thumbs up or down" in e.value for e in at.error)
    assert list_parts(own_home.lake, ["reviews"]) == []


def test_thumbs_up_on_compare_reviews_the_challenger(app: AppFactory, own_home: Paths) -> None:
    at = open_expanders(app(own_home, "compare", run="r2", baseline="r1"), SIDE_BY_SIDE_OPEN)
    prefix = _form_key(at, "compare_review_r2_")
    at.feedback(key=f"{prefix}_thumbs").set_value(1)
    at.text_input(key=f"{prefix}_reviewer").input("Kim")
    next(b for b in at.button if b.label == "Save").click().run()
    assert not at.exception, [e.value for e in at.exception]
    ingest(own_home)
    rows = Warehouse(own_home.warehouse).sql("SELECT run_id, label, reviewer FROM reviews").frame
    assert rows.to_dicts() == [{"run_id": "r2", "label": "correct", "reviewer": "Kim"}]
    # after the ingest, a rerun of the same session shows Kim's label next to the thumbs
    at.run()
    assert any("Kim said correct" in c.value for c in at.caption)
