"""Every selection in the URL: a page opened with query parameters shows that view, and a
choice made on the page is written back; ground-truth page URLs are links only when safe."""

from __future__ import annotations

from dashboard.components.highlighter import page_link_html, render_pages
from engine.settings import Paths
from tests.dashboard.conftest import AppFactory, table


def test_overview_from_the_url_and_back(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home, run="r2", baseline="rc", tag="pricing")
    assert at.selectbox(key="overview_run").value == "r2"
    assert at.selectbox(key="overview_baseline_r2").value == "rc"
    assert at.selectbox(key="overview_tag_r2").value == "pricing"
    at.selectbox(key="overview_baseline_r2").set_value("r1").run()
    # r1 is r2's default baseline: the URL says nothing about it
    assert at.query_params.get("run") == "r2" and "baseline" not in at.query_params
    at.selectbox(key="overview_baseline_r2").set_value("").run()
    assert at.query_params.get("baseline") == "none"
    at = app(fixture_home, run="r2", baseline="none")
    assert at.selectbox(key="overview_baseline_r2").value == ""


def test_compare_from_the_url(app: AppFactory, fixture_home: Paths) -> None:
    at = app(
        fixture_home,
        "compare",
        run="r2",
        baseline="rc",
        metric="completeness",
        domain="acme.example",
        status="improved",
    )
    assert at.selectbox(key="compare_run").value == "r2"
    assert at.selectbox(key="compare_baseline_r2").value == "rc"
    assert at.selectbox(key="compare_metric").value == "completeness"
    assert at.selectbox(key="compare_domain").value == "acme.example"
    assert at.selectbox(key="compare_status").value == "improved"
    at.selectbox(key="compare_status").set_value("regressed").run()
    assert at.query_params.get("status") == "regressed"
    at.number_input(key="compare_page").set_value(2).run()
    assert at.query_params.get("page") == "2"


def test_trends_claims_attribution_runs_from_the_url(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home, "trends", metric="completeness", domain="gamma.example")
    rows = table(at, "run_name")
    assert [(r["run_id"], r["gamma.example"]) for r in rows] == [("r1", 50.0), ("r2", 65.0)]
    at = app(fixture_home, "claims", run="r1", domain="acme.example")
    assert at.selectbox(key="claims_run").value == "r1"
    assert at.selectbox(key="claims_domain").value == "acme.example"
    at = app(fixture_home, "attribution", run="r1", domain="beta.example")
    assert at.selectbox(key="attribution_trend_domain").value == "beta.example"
    at = app(fixture_home, "runs", run="r1")
    assert at.selectbox(key="runs_detail_run").value == "r1"
    at.selectbox(key="runs_detail_run").set_value("r2").run()
    assert at.query_params.get("run") == "r2"


def test_sample_finder_and_sample_from_the_url(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home, "sample", run="r2", domain="beta.example", q="q2")
    assert [r["sample_id"] for r in table(at, "answer")] == ["beta-q2"]
    at = app(fixture_home, "sample", run="r2", sample="acme-q1", iteration="1")
    assert at.query_params.get("sample") == "acme-q1"
    assert at.query_params.get("iteration") == "1"
    at.selectbox(key="sample_run").set_value("r1").run()
    assert "sample" not in at.query_params and at.query_params.get("run") == "r1"


def test_ground_truth_urls_are_links_only_when_http() -> None:
    link = page_link_html('https://acme.example/pricing?a=1&b="x"')
    assert link.startswith('<a href="https://acme.example/pricing?a=1&amp;b=&quot;x&quot;"')
    assert 'rel="noopener noreferrer nofollow"' in link
    for unsafe in ("javascript:alert(1)", "java\tscript:alert(1)", "/relative", "ftp://x/y"):
        assert "<a" not in page_link_html(unsafe), unsafe
    assert "<a" not in page_link_html("https://")  # no host
    html = render_pages(
        [{"chunk_id": "p1#0", "page_url": "http://acme.example/a", "text": "t"}], {}
    )
    assert '<a href="http://acme.example/a"' in html
