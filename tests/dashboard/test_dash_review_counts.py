"""A saved review counts at once: the save asks for an ingest in the background, so Judge
agreement shows it without anyone clicking "Ingest now" (a real ``evalhouse ingest``
process on a real warehouse)."""

from __future__ import annotations

from pathlib import Path

from dashboard.background_ingest import wait_idle
from tests.dashboard.conftest import AppFactory
from tests.dashboard.fixture_home import build_fixture_home
from warehouse import queries as q
from warehouse.queries import Warehouse

PREFIX = "review_r2_acme-q1_1_"


def test_a_saved_review_shows_on_judge_agreement_without_an_ingest_click(
    app: AppFactory, tmp_path: Path
) -> None:
    home = build_fixture_home(tmp_path / "home")
    before = app(home, "agreement")
    assert any("No reviews yet" in i.value for i in before.info)

    at = app(home, "sample", run="r2", sample="acme-q1", iteration="1")
    at.radio(key=f"{PREFIX}_response").set_value("incorrect")
    at.text_area(key=f"{PREFIX}_comment").input("Sundays are closed")
    at.text_input(key=f"{PREFIX}_reviewer").input("Pat")
    next(b for b in at.button if b.label == "Save review").click().run()
    assert any("in a few seconds" in s.value for s in at.success)

    assert wait_idle(home.home, 120)
    reviews = q.sample_reviews(Warehouse(home.warehouse), q.SampleRef("r2", "acme-q1", 1, ""))
    assert reviews.filter(reviews["comment"] == "Sundays are closed").height == 1
    after = app(home, "agreement")
    assert not any("No reviews yet" in i.value for i in after.info)
