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
from dashboard.components.answer import NOTES
from engine.settings import Paths
from tests.dashboard.conftest import AppFactory, all_columns, html_tables, table


def shown(at: AppTest) -> list[pd.DataFrame]:
    """The display text of every table on the page, data grids and then HTML tables (what
    the browser draws)."""
    out = []
    for frame in at.dataframe:
        # the browser draws a null cell as the element's placeholder ("None" without one):
        # display values of a Styler do not reach null cells nor formatted number columns
        assert frame.proto.placeholder == tables.MISSING, list(frame.value.columns)
        styler = frame.proto.arrow_data.styler
        if not styler.display_values:
            # drawn raw (a fixed table of strings): fine only when it holds no null
            raw = frame.value
            assert not raw.isna().to_numpy().any(), list(raw.columns)
            out.append(raw.astype(str))
            continue
        out.append(pa.ipc.open_stream(io.BytesIO(styler.display_values)).read_pandas())
    for _, header, rows in html_tables(at, as_drawn=True):
        out.append(pd.DataFrame(rows, columns=header))
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


def test_a_metric_and_its_0_100_form_each_get_their_scale_format() -> None:
    """A column named after a metric is on its own scale; ``<metric>_100`` (view
    result_scores) is its 0-100 form, formatted as one (what the SQL page shows)."""
    frame = pl.DataFrame(
        {
            "judge_faithfulness": [4.0],
            "judge_faithfulness_100": [75.0],
            "pass_rate": [0.8],
            "pass_rate_100": [80.0],
            "claim_faithfulness_100": [50.0],
            "error_rate": [0.25],
        }
    )
    html = tables.styled(frame).to_html()
    for text in ("4.00", "75.0", "0.80", "80.0", "50.0", "0.25"):
        assert text in html, text
    assert "75.00" not in html and "80.00" not in html


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
        ("overview", {}),
        ("compare", {}),
        ("claims", {}),
        ("attribution", {}),
        ("runs", {}),
        ("trends", {}),
        ("sample", {"run": "r2", "sample": "acme-q1", "iteration": "1"}),
    ]
    for page, query in pages:
        at = app(fixture_home, page, **query)
        assert shown(at), page
        _assert_no_none(at)
    # trends: beta has no score in rc, the pivot cell is null -> the dash
    at = app(fixture_home, "trends")
    assert tables.MISSING in cells(shown(at))


def test_abstained_and_no_answer_labelled_on_every_sample_list(
    app: AppFactory, fixture_home: Paths
) -> None:
    at = app(fixture_home, "sample", run="r2")
    at.selectbox(key="sample_domain").set_value("gamma.example").run()
    listing = {r["sample_id"]: r["answer"] for r in table(at, "answer")}
    assert listing["gamma-q1"] == "abstained" and listing["gamma-q2"] == "no answer"
    assert listing["gamma-q3"] == "answered"
    at = app(fixture_home, "sample", run="r2")
    at.selectbox(key="sample_domain").set_value("beta.example").run()
    assert {r["sample_id"]: r["answer"] for r in table(at, "answer")}["beta-q2"] == "error"

    at = app(fixture_home, "compare")
    at.selectbox(key="compare_run").set_value("r2").run()
    at.selectbox(key="compare_domain").set_value("gamma.example").run()
    rows = {r["sample_id"]: r for r in table(at, "challenger_score")}
    # one column for both answers: "baseline → challenger", one word when the same
    assert rows["gamma-q1"]["answer"] == "answered → abstained"
    assert str(rows["gamma-q2"]["answer"]).endswith("→ no answer")
    assert rows["gamma-q3"]["answer"] == "answered"

    at = app(fixture_home, "claims")
    at.selectbox(key="claims_run").set_value("r2").run()
    answers = {r["sample_id"]: r["answer"] for r in table(at, "missing_claims")}
    assert answers.get("acme-q1") == "answered"


def test_sample_page_says_abstained_and_no_answer(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home, "sample", run="r2", sample="gamma-q1", iteration="1")
    assert [w.value for w in at.warning] == [NOTES["abstained"]]
    at = app(fixture_home, "sample", run="r2", sample="gamma-q2", iteration="1")
    assert [w.value for w in at.warning] == [NOTES["no answer"]]
    at = app(fixture_home, "sample", run="r2", sample="gamma-q3", iteration="1")
    assert not at.warning


def test_graders_on_overview_with_tiers_and_delta(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home)
    at.selectbox(key="overview_run").set_value("r2").run()
    rows = {(str(r["Domain"]), str(r["Metric"])): r for r in all_columns(at)}
    cites = rows["acme.example", "Grader cites-source"]
    # r2: (1.0 + 0.5) / 2 x 100 = 75 (good); r1: (0.5 + 0) / 2 x 100 = 25 -> +50
    assert (cites["Score"], cites["Tier"], cites["Δ"]) == (75.0, "good", "▲ +50.0")
    assert cites["Noise"] == "too few paired samples (2)"
    price = rows["acme.example", "Grader mentions-price"]
    assert (price["Score"], price["Tier"], price["Δ"]) == (100.0, "excellent", "")
    assert ("beta.example", "Grader cites-source") not in rows


def test_graders_on_compare(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home, "compare")
    at.selectbox(key="compare_run").set_value("r2").run()
    assert "Grader cites-source" in at.selectbox(key="compare_metric").options
    at.selectbox(key="compare_metric").set_value("grader:cites-source").run()
    at.toggle(key="compare_all_columns").set_value(True).run()
    counts = {r["domain"]: r for r in table(at, "worst_delta")}
    # acme-q1 0.5 -> 1.0 and acme-q2 0.0 -> 0.5: both +50, improved beyond 5 points
    assert (counts["acme.example"]["improved"], counts["acme.example"]["mean_delta"]) == (2, 50.0)
    assert counts["beta.example"]["not_scored"] == counts["beta.example"]["samples"]
    samples = {r["sample_id"]: r for r in table(at, "challenger_score")}
    assert (samples["acme-q2"]["baseline_score"], samples["acme-q2"]["challenger_score"]) == (
        0.0,
        50.0,
    )


def test_runs_page_shows_the_low_faithfulness_analysis(
    app: AppFactory, fixture_home: Paths
) -> None:
    at = app(fixture_home, "runs")
    at.selectbox(key="runs_detail_run").set_value("r2").run()
    assert at.expander, "one expander per iteration"
    insight = " ".join(m.value for m in at.markdown)
    # three scored answers: gamma-q1 at 1, acme-q1 at 2 -> 2 of 3 low, 1 + 1 + 0
    assert "2 of 3 answers" in insight and "1 completely false, 1 mostly" in insight
    counts = {r["category"]: r["samples"] for r in table(at, "category", 0)}
    assert counts == {
        "Completely false (faithfulness 1)": 1,
        "Mostly false (faithfulness 2)": 1,
        "Mixed (faithfulness 3)": 0,
        "Completeness failures (completeness 1-3)": 2,
    }
    examples = table(at, "reasoning")
    assert {(r["category"], r["sample_id"], r["reasoning"]) for r in examples} >= {
        ("Mostly false (faithfulness 2)", "acme-q1", "Adds a discount the context never mentions."),
        ("Completely false (faithfulness 1)", "gamma-q1", "Contradicts the context."),
    }
    at.selectbox(key="runs_detail_run").set_value("r1").run()
    assert any("nothing to analyse" in i.value for i in at.info)


def test_sample_page_shows_ground_truth_coverage(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home, "sample", run="r2", sample="acme-q1", iteration="1")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Coverage"] == "42.5%"
    at = app(fixture_home, "sample", run="r1", sample="acme-q1", iteration="1")
    assert {m.label: m.value for m in at.metric}["Coverage"] == "n/a"
