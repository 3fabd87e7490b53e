"""Compare with more than two runs, grouped by any field of the samples, only the samples
that differ, and every choice in the URL (the fixture: r1 the baseline, r2 the challenger,
r3 an added run that scored only the two acme samples, over two iterations)."""

from __future__ import annotations

import pandas as pd
import pytest

from engine.settings import Paths
from tests.dashboard.conftest import AppFactory, table
from tests.warehouse.test_compare_queries import ODD_FIELD, compare_home


def _caption(at: object) -> str:
    return next(c.value for c in at.caption if "largest regression first" in c.value)  # type: ignore[attr-defined]


def test_added_run_gets_score_and_delta_columns(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home, "compare", run="r2", add="r3")
    assert at.multiselect(key="compare_add_r2_r1").value == ["r3"]
    domains = {r["domain"]: r for r in table(at, "worst_delta")}
    # r3's acme means 91 and 71 (iterations 90/92 and 70/72) against r1's 80 and 90
    assert (domains["acme.example"]["score_r3"], domains["acme.example"]["delta_r3"]) == (
        81.0,
        -4.0,
    )
    assert pd.isna(domains["beta.example"]["delta_r3"])  # r3 has no beta sample
    samples = {r["sample_id"]: r for r in table(at, "challenger_score")}
    assert (samples["acme-q2"]["delta"], samples["acme-q2"]["delta_r3"]) == (-20.0, -19.0)
    assert samples["acme-q1"]["score_r3"] == 91.0
    assert pd.isna(samples["gamma-q1"]["score_r3"])
    # neither the challenger nor the baseline can be added
    options = at.multiselect(key="compare_add_r2_r1").options
    assert sorted(o.rsplit(" · ", 1)[-1] for o in options) == ["r3", "rc"]


def test_group_by_tag_means_and_deltas(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home, "compare", run="r2", add="r3")
    options = at.selectbox(key="compare_group").options
    assert options[:1] == ["Domain"] and "Tag" in options and "AI provider" in options
    at.selectbox(key="compare_group").set_value("tag").run()
    at.toggle(key="compare_all_columns").set_value(True).run()  # the sample counts
    groups = {r["group_value"]: r for r in table(at, "baseline_mean")}
    # pricing: acme-q1 80 -> 90 and beta-q1 40 -> 60; r3 scored only acme-q1 (91)
    assert (groups["pricing"]["samples"], groups["pricing"]["delta_r2"]) == (2, 15.0)
    assert groups["pricing"]["delta_r3"] == 11.0
    assert groups["support"]["regressed"] == 1
    assert groups["(none)"]["samples"] == 6
    at.selectbox(key="compare_in_tag").set_value("support").run()
    rows = table(at, "challenger_score")
    assert [(r["sample_id"], r["group_value"]) for r in rows] == [("acme-q2", "support")]
    assert at.query_params.get("group") == "tag"
    assert at.query_params.get("in_group") == "support"


def test_different_only_keeps_samples_that_moved_or_answer_otherwise(
    app: AppFactory, fixture_home: Paths
) -> None:
    at = app(fixture_home, "compare", run="r2")
    assert "9 samples" in _caption(at)
    at.checkbox(key="compare_different").check().run()
    ids = {r["sample_id"] for r in table(at, "challenger_score")}
    # moved beyond 5 points: acme-q1, acme-q2, beta-q1; same score, but gamma-q1
    # abstained and gamma-q2 gave no answer where r1 answered
    assert ids == {"acme-q1", "acme-q2", "beta-q1", "gamma-q1", "gamma-q2"}
    assert "5 samples that differ" in _caption(at)
    assert at.query_params.get("diff") == "1"


def test_choices_round_trip_through_the_url(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home, "compare", run="r2")
    at.multiselect(key="compare_add_r2_r1").select("r3").run()
    at.selectbox(key="compare_group").set_value("provider").run()
    at.checkbox(key="compare_different").check().run()
    at.toggle(key="compare_all_columns").set_value(True).run()
    params = {k: at.query_params[k] for k in at.query_params}
    assert params["add"] == "r3" and params["group"] == "provider" and params["diff"] == "1"
    assert params["columns"] == "all"
    again = app(fixture_home, "compare", **params)
    assert again.multiselect(key="compare_add_r2_r1").value == ["r3"]
    assert again.selectbox(key="compare_group").value == "provider"
    assert again.checkbox(key="compare_different").value is True
    assert again.toggle(key="compare_all_columns").value is True
    assert table(again, "baseline_mean")  # the per-provider table is drawn


def test_mover_link_lands_on_its_samples_largest_drop_first(
    app: AppFactory, fixture_home: Paths
) -> None:
    # what an Overview mover links to: the run, its domain and metric
    at = app(fixture_home, "compare", run="r2", domain="acme.example", metric="accuracy")
    assert "domain" not in table(at, "challenger_score")[0]  # it is the filter's
    at.toggle(key="compare_all_columns").set_value(True).run()  # as a reader would
    rows = table(at, "challenger_score")
    assert {r["domain"] for r in rows} == {"acme.example"}
    deltas = [r["delta"] for r in rows]
    assert deltas == sorted(deltas) and deltas[0] == -20.0


def test_group_by_a_metadata_field_shows_its_name_as_text(
    app: AppFactory, tmp_path_factory: pytest.TempPathFactory
) -> None:
    home = compare_home(tmp_path_factory.mktemp("compare-meta") / "home")
    at = app(home, "compare", run="new", baseline="base", group=f"meta:{ODD_FIELD}")
    assert at.selectbox(key="compare_group").value == f"meta:{ODD_FIELD}"
    heading = next(h.value for h in at.subheader if "metadata" in h.value)
    # the field's name is data: its Markdown and HTML come out escaped, never rendered
    assert "**<b>" not in heading and "\\*\\*\\<b" in heading
    groups = {r["group_value"]: r for r in table(at, "baseline_mean")}
    assert set(groups) == {"x", "y", "(none)"}
    # s1 80 -> 60 and s3 50 -> 90 share "x"
    assert groups["x"]["delta_new"] == 10.0
