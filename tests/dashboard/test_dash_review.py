"""AppTests of human review (Sample page), judge agreement (its page) and run labels (Runs
page): what a person clicks is saved to the lake, ingest loads it, the pages show it."""

from __future__ import annotations

from pathlib import Path

import pytest

from dashboard.components.run_label_form import LABEL_OPEN
from engine.lake import list_parts
from engine.settings import Paths
from ingest import ingest
from tests.dashboard.conftest import AppFactory, open_expanders, table
from tests.dashboard.fixture_home import build_fixture_home
from warehouse import queries as q
from warehouse.queries import Warehouse

PREFIX = "review_r2_acme-q1_1_"
"""Widget keys of the review form of acme-q1, iteration 1 of run r2."""


@pytest.fixture
def own_home(tmp_path: Path) -> Paths:
    """A fixture home of this test's own: these tests write to its lake."""
    return build_fixture_home(tmp_path / "home")


def _blank(value: object) -> bool:
    """A null cell (pandas shows it as NaN)."""
    return value is None or value != value


def _review_acme_q1(app: AppFactory, home: Paths, reviewer: str) -> object:
    at = app(home, "sample", run="r2", sample="acme-q1", iteration="1")
    at.radio(key=f"{PREFIX}_response").set_value("incorrect")
    at.radio(key=f"{PREFIX}_claim_c1").set_value("found")
    at.radio(key=f"{PREFIX}_claim_c2").set_value("contradicted")
    at.radio(key=f"{PREFIX}_verdict_0").set_value("agree")
    at.radio(key=f"{PREFIX}_verdict_1").set_value("disagree")
    at.text_area(key=f"{PREFIX}_comment").input("Support *is* open on Sundays [see](x)")
    at.text_input(key=f"{PREFIX}_reviewer").input(reviewer)
    next(b for b in at.button if b.label == "Save review").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_review_labels_show_data_as_text(app: AppFactory, own_home: Paths) -> None:
    at = app(own_home, "sample", run="r2", sample="acme-q1", iteration="1")
    # "$20 ... $" would start KaTeX in a Markdown label: the claim text comes escaped
    label = at.radio(key=f"{PREFIX}_verdict_0").label
    assert label == r"0: Acme Pro costs \$20 per month. (judge: SUPPORTED)"


def test_review_submit_then_agreement_numbers(app: AppFactory, own_home: Paths) -> None:
    at = _review_acme_q1(app, own_home, "Pat")
    assert any("Saved 5 item reviews by Pat" in s.value for s in at.success)
    (part,) = list_parts(own_home.lake, ["reviews"])
    assert (part.run_id, part.iteration) == ("r2", 1)

    ingest(own_home)
    at = app(own_home, "sample", run="r2", sample="acme-q1", iteration="1")
    earlier = table(at, "reviewer")
    assert {(r["item"], r["item_id"], r["label"]) for r in earlier} == {
        ("response", "", "incorrect"),
        ("claim", "c1", "found"),
        ("claim", "c2", "contradicted"),
        ("verdict", "0", "agree"),
        ("verdict", "1", "disagree"),
    }
    assert {r["machine_label"] for r in earlier} == {
        "fail", "found", "missing", "SUPPORTED", "CONTRADICTED"
    }  # fmt: skip

    at = app(own_home, "agreement")
    labels = {r["metric"]: r for r in table(at, "kappa")}
    # claims: analyzer (found, missing) vs Pat (found, contradicted): p_o 1/2, p_e 1/4
    # -> kappa (1/2 - 1/4) / (3/4) = 1/3
    status = labels["Claim status (found / missing / contradicted)"]
    assert (status["n"], status["accuracy"]) == (2, 0.5)
    assert status["kappa"] == pytest.approx(1 / 3)
    # verdicts: judge S, N; Pat agree, disagree -> S, S: p_o 1/2, p_e (1*2 + 1*0)/4 -> 0
    verdict = labels["Claim verdict (supported or not)"]
    assert (verdict["n"], verdict["accuracy"], verdict["kappa"]) == (2, 0.5, 0.0)
    # the rubric failed and Pat says incorrect: one pair, one label each side: no kappa
    rubric = labels["Rubric pass (reviewer: correct = pass)"]
    assert (rubric["n"], rubric["accuracy"]) == (1, 1.0)
    assert _blank(rubric["kappa"])
    scores = {r["metric"]: r for r in table(at, "pearson")}
    # one reviewed response: a correlation needs two
    faith = scores["Judge faithfulness"]
    assert faith["n"] == 1 and _blank(faith["pearson"]) and _blank(faith["spearman"])
    queue = table(at, "disagreements")
    assert [(r["sample_id"], r["disagreements"], r["labels"]) for r in queue] == [("acme-q1", 2, 5)]
    assert str(queue[0]["open"]).endswith("/sample?run=r2&sample=acme-q1&iteration=1")
    # the comment reaches the queue and the list of comments, as typed (a table cell is
    # plain text: the Markdown in it stays as written)
    said = "Support *is* open on Sundays [see](x)"
    assert queue[0]["comments"] == f"Pat: {said}"
    (comment,) = table(at, "comment")
    assert (comment["reviewer"], comment["comment"], comment["sample_id"]) == (
        "Pat",
        said,
        "acme-q1",
    )
    assert (comment["disagreements"], comment["open"]) == (2, queue[0]["open"])
    matrix = table(at, "judge_label")
    assert {r["judge_label"]: r["found"] for r in matrix} == {
        "found": 1, "missing": 0, "contradicted": 0
    }  # fmt: skip
    assert [r["contradicted"] for r in matrix] == [0, 1, 0]
    # the run filter offers the reviewed runs only; none chosen is all of them
    (runs,) = [m for m in at.multiselect if m.key == "agreement_runs"]
    assert len(runs.options) == 1 and runs.options[0].endswith(" · r2")
    assert runs.value == []
    # chosen in the URL (a shared link): kept when reviewed, dropped when not
    at = app(own_home, "agreement", run="r2,r1")
    (runs,) = [m for m in at.multiselect if m.key == "agreement_runs"]
    assert runs.value == ["r2"]
    assert [r["sample_id"] for r in table(at, "disagreements")] == ["acme-q1"]


def test_review_without_a_name_is_refused(app: AppFactory, own_home: Paths) -> None:
    at = _review_acme_q1(app, own_home, "   ")
    assert any("Enter your name" in e.value for e in at.error)
    assert list_parts(own_home.lake, ["reviews"]) == []


def test_agreement_page_without_comments_says_where_they_go(
    app: AppFactory, own_home: Paths
) -> None:
    at = app(own_home, "sample", run="r2", sample="acme-q1", iteration="1")
    at.radio(key=f"{PREFIX}_response").set_value("correct")
    at.text_input(key=f"{PREFIX}_reviewer").input("Sam")
    next(b for b in at.button if b.label == "Save review").click().run()
    ingest(own_home)
    at = app(own_home, "agreement")
    assert [_blank(r["comments"]) for r in table(at, "disagreements")] == [True]
    assert not [f for f in at.dataframe if "comment" in f.value.columns]
    assert any("No review with a comment yet" in c.value for c in at.caption)


def test_agreement_page_without_reviews_says_how(app: AppFactory, own_home: Paths) -> None:
    at = app(own_home, "agreement")
    assert any("No reviews yet" in i.value for i in at.info)


def test_rename_tag_archive_and_show_archived(app: AppFactory, own_home: Paths) -> None:
    at = app(own_home, "runs")
    assert not [t for t in at.text_input if (t.key or "").startswith("runs_label_")]
    at.selectbox(key="runs_detail_run").set_value("r1").run()
    open_expanders(at, LABEL_OPEN)  # the form is built only while open
    at.text_input(key="runs_label_name_r1").input("week one, renamed")
    at.text_input(key="runs_label_tags_r1").input("baseline, old")
    at.checkbox(key="runs_label_archived_r1").check()
    at.text_input(key="runs_label_by_r1").input("Lee")
    next(b for b in at.button if b.label == "Save").click().run()
    assert not at.exception
    assert any("it shows after the next ingest" in s.value for s in at.success)
    # "Ingest now" runs `evalhouse ingest` in its own process
    at.button(key="runs_ingest").click().run(timeout=180)
    assert any("Ingest: ingested 1 parts" in s.value for s in at.success), [
        e.value for e in [*at.success, *at.error]
    ]

    at = app(own_home)  # Overview: r1 is archived, so not offered
    assert "r1" not in at.selectbox(key="overview_run").options
    at.sidebar.toggle(key="show_archived").set_value(True).run()
    options = at.selectbox(key="overview_run").options
    assert any(o.startswith("week one, renamed · ") and o.endswith(" · r1") for o in options)

    at = app(own_home, "runs")
    assert "week one, renamed" not in [r["name"] for r in table(at, "status")]
    at.sidebar.toggle(key="show_archived").set_value(True).run()
    row = next(r for r in table(at, "status") if r["name"] == "week one, renamed")
    assert list(row["tags"]) == ["baseline", "old"]
    assert row["status"] == "completed (archived)"

    at = app(own_home, "trends")
    assert "r1" not in {r["run_id"] for r in table(at, "run_id")}
    at.sidebar.toggle(key="show_archived").set_value(True).run()
    assert "r1" in {r["run_id"] for r in table(at, "run_id")}


def test_the_form_shows_the_reviewers_current_labels(app: AppFactory, own_home: Paths) -> None:
    at = _review_acme_q1(app, own_home, "Pat")
    # the same session, before any ingest: another page and back keeps what was saved
    at.switch_page("app_pages/overview.py").run()
    at.switch_page("app_pages/sample.py")
    at.query_params.update({"run": "r2", "sample": "acme-q1", "iteration": "1"})
    at.run()
    assert not at.exception
    assert at.radio(key=f"{PREFIX}_response").value == "incorrect"
    assert at.radio(key=f"{PREFIX}_claim_c2").value == "contradicted"
    assert at.text_input(key=f"{PREFIX}_reviewer").value == "Pat"
    assert at.text_area(key=f"{PREFIX}_comment").value.startswith("Support *is* open")

    # a new session after ingest: nobody is known yet, so nothing is pre-filled ...
    ingest(own_home)
    at = app(own_home, "sample", run="r2", sample="acme-q1", iteration="1")
    assert at.radio(key=f"{PREFIX}_response").value == "not reviewed"
    # ... until the reviewer says who they are (one save), then every form shows their labels
    at.radio(key=f"{PREFIX}_verdict_1").set_value("agree")
    at.text_input(key=f"{PREFIX}_reviewer").input("Pat")
    next(b for b in at.button if b.label == "Save review").click().run()
    at.switch_page("app_pages/overview.py").run()
    at.switch_page("app_pages/sample.py")
    at.query_params.update({"run": "r2", "sample": "acme-q1", "iteration": "1"})
    at.run()
    assert at.radio(key=f"{PREFIX}_response").value == "incorrect"  # from the warehouse
    assert at.radio(key=f"{PREFIX}_verdict_1").value == "agree"  # saved in this session


def test_moving_a_run_to_another_series_changes_its_baseline(
    app: AppFactory, own_home: Paths
) -> None:
    wh = Warehouse(own_home.warehouse)
    assert q.baseline_run(wh, "r2") == "r1"
    at = open_expanders(app(own_home, "runs"), LABEL_OPEN)
    at.selectbox(key="runs_detail_run").set_value("r2").run()
    series = at.text_input(key="runs_label_series_r2")
    assert series.value  # the series the run has now
    series.input("canary")
    at.text_input(key="runs_label_by_r2").input("Lee")
    next(b for b in at.button if b.label == "Save").click().run()
    assert not at.exception
    ingest(own_home)
    wh = Warehouse(own_home.warehouse)
    assert wh.sql("SELECT series FROM run_series WHERE run_id = 'r2'").frame.item() == "canary"
    assert q.baseline_run(wh, "r2") is None  # the first run of its new series
    # an empty series is refused: the run keeps the one it has
    at = open_expanders(app(own_home, "runs"), LABEL_OPEN)
    at.selectbox(key="runs_detail_run").set_value("r2").run()
    at.text_input(key="runs_label_series_r2").input("  ")
    next(b for b in at.button if b.label == "Save").click().run()
    assert any("series cannot be empty" in e.value for e in at.error)
