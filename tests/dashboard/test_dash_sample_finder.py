"""Finding a sample: text in the response or an expected claim, the rubric outcome, a flag
and a metric's range narrow the Sample page's list; the page gives a copyable link."""

from __future__ import annotations

from dashboard.components.links import sample_url
from engine.settings import Paths
from tests.dashboard.conftest import AppFactory, table
from warehouse import queries as q
from warehouse.queries import Warehouse


def _ids(at: object) -> list[str]:
    return [str(r["sample_id"]) for r in table(at, "sample_id")]  # type: ignore[arg-type]


def test_search_reaches_responses_and_claims(app: AppFactory, fixture_home: Paths) -> None:
    wh = Warehouse(fixture_home.warehouse)
    every = q.run_samples(wh, "r2")
    assert every.height > 1
    # a phrase only in one response (the fixture's planted markup) and one only in a claim
    in_response = q.run_samples(wh, "r2", search="open on sundays")
    assert set(in_response["sample_id"]) == {"acme-q1"}
    in_claim = q.run_samples(wh, "r2", search="support is closed on sundays")
    assert "acme-q1" in set(in_claim["sample_id"])
    at = app(fixture_home, "sample", run="r2")
    at.text_input(key="sample_search").set_value("open on sundays").run()
    assert _ids(at) == ["acme-q1"]


def test_filters_by_outcome_flag_and_range(fixture_home: Paths) -> None:
    wh = Warehouse(fixture_home.warehouse)
    rows = wh.sql(
        "SELECT sample_id, passed, error, accuracy, flags FROM results WHERE run_id = 'r2'"
    ).frame
    passed = q.run_samples(wh, "r2", outcome="passed")
    assert set(passed["sample_id"]) == set(rows.filter(rows["passed"])["sample_id"])
    errors = q.run_samples(wh, "r2", outcome="error")
    assert set(errors["sample_id"]) == set(rows.filter(rows["error"].is_not_null())["sample_id"])
    high = q.run_samples(wh, "r2", metric="accuracy", low=80, high=100)
    expected = rows.filter((rows["accuracy"] >= 80) & (rows["accuracy"] <= 100))
    assert set(high["sample_id"]) == set(expected["sample_id"])
    flags = q.run_flags(wh, "r2")
    if flags.height:
        flag = str(flags["flag"][0])
        flagged = q.run_samples(wh, "r2", flag=flag)
        assert flagged.height == int(flags["rows"][0])


def test_a_copyable_link_opens_the_sample() -> None:
    assert (
        sample_url("http://10.0.0.5:8501/sample?run=x", "r2", "acme q1", 2, "gpt-x")
        == "http://10.0.0.5:8501/sample?run=r2&sample=acme+q1&iteration=2&candidate=gpt-x"
    )
    assert sample_url("https://evals.example/team/trends", "r", "s", 1, "") == (
        "https://evals.example/team/sample?run=r&sample=s&iteration=1"
    )


def test_the_review_queue_puts_disagreement_and_doubt_first(
    app: AppFactory, fixture_home: Paths
) -> None:
    wh = Warehouse(fixture_home.warehouse)
    queue = q.review_next(wh, "r2")
    reviewed = set(
        wh.sql("SELECT sample_id FROM reviews WHERE run_id = 'r2'").frame["sample_id"].to_list()
    )
    assert queue.height and not reviewed & set(queue["sample_id"])
    keys = [
        (not r["machines_disagree"], r["lowest_confidence"] is None, r["lowest_confidence"] or 0)
        for r in queue.iter_rows(named=True)
    ]
    assert keys == sorted(keys)
    for r in queue.iter_rows(named=True):
        if r["passed"] is not None and r["accuracy"] is not None:
            assert r["machines_disagree"] == (r["passed"] != (r["accuracy"] >= 70))
    at = app(fixture_home, "sample", run="r2")
    at.toggle(key="sample_review_queue").set_value(True).run()
    assert any("unreviewed samples to look at first" in c.value for c in at.caption)
