"""Sample page and the highlighter: spans, hover details, ground truth, claims, verdicts,
and escaping of untrusted response text."""

from __future__ import annotations

from pathlib import Path

import pytest

from dashboard.components.highlighter import render_pages, render_response
from engine.settings import Paths
from tests.dashboard.conftest import AppFactory, table


def test_highlighter_escapes_html_and_keeps_markdown_literal() -> None:
    text = 'Hi <script>alert("x")</script> **bold** [link](javascript:alert(1)) & done'
    out = render_response(
        text,
        [
            {
                "response_start": 0,
                "response_end": 2,
                "chunk_id": "p<1>",
                "page_url": 'https://e/"x"',
                "matched_text": "<b>passage</b>",
                "similarity": 0.9,
            }
        ],
    )
    assert "<script>" not in out.html and "<b>" not in out.html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in out.html
    assert "**bold** [link](javascript:alert(1)) &amp; done" in out.html
    assert 'title="Matches passage p&lt;1&gt; (similarity 0.90)' in out.html
    assert "https://e/&quot;x&quot;" in out.html and "&lt;b&gt;passage&lt;/b&gt;" in out.html
    pages = render_pages([{"chunk_id": "c", "page_url": "<u>", "text": "<i>t</i>"}], {})
    assert "&lt;u&gt;" in pages and "&lt;i&gt;t&lt;/i&gt;" in pages and "<i>" not in pages


def test_highlighter_segments_overlaps_and_clamps() -> None:
    text = "abcdefghij"
    out = render_response(
        text,
        [
            {"response_start": 0, "response_end": 6, "chunk_id": "a", "similarity": 0.7},
            {"response_start": 4, "response_end": 8, "chunk_id": "b", "similarity": 0.9},
            {"response_start": 8, "response_end": 99, "chunk_id": None, "similarity": 0.1},
        ],
        verdicts=[
            {
                "verdict": "CONTRADICTED",
                "response_start": 1,
                "response_end": 2,
                "claim_text": "x",
                "evidence": "y",
            },
            {"verdict": "SUPPORTED", "response_start": 0, "response_end": 3},
        ],
        attributions=[
            {"type": "brand", "matched_text": "j", "response_start": 9, "response_end": 10}
        ],
    )
    assert out.chunk_colors == {"a": "#cce5ff", "b": "#d4edda"}
    assert out.counts == {"matched": 2, "unsupported": 1, "contradicted": 1, "attribution": 1}
    # 4..6 is covered by both passages: the better match (b) gives the colour
    assert 'style="background:#d4edda" title="Matches passage a' in out.html
    assert ">ef</span>" in out.html
    assert out.html.count("eh-contradicted") == 1
    assert "eh-attribution eh-unsupported" in out.html and ">j</span>" in out.html


def test_sample_page_from_query_params(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home, "sample", run="r2", sample="acme-q1", iteration="1")
    response, pages = at.html[0].value, at.html[1].value
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in response and "<script>" not in response
    assert "**</span>" in response  # markdown stays literal text
    assert (
        'title="Matches passage p1#0 (similarity 0.91)\nPage: https://acme.example/pricing'
        in response
    )
    assert "Contradicted: Acme support is open on Sundays." in response
    assert "Attribution (url): https://acme.example/pricing" in response
    # ground truth from the run's test set: the matched passage coloured, the other not
    assert "p1#0 · matched · similarity 0.91" in pages
    assert "p2#0 · not matched" in pages and "https://acme.example/support" in pages
    assert not any("<script>" in m.value for m in at.markdown)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Accuracy · excellent"] == "90.0"
    assert metrics["Completeness · good"] == "80.0"
    assert metrics["Rubric pass"] == "fail"
    assert metrics["Completeness (1-5)"] == "3.00"
    assert [t.value for t in at.text] == [
        "question acme-q1",
        "States the price; wrong about Sundays.",
    ]
    # Missing, then Contradicted (none here: the claims carry no status), then Found
    assert table(at, "evidence", nth=0) == []
    (found,) = table(at, "evidence", nth=1)
    assert found["claim_text"] == "Acme Pro costs $20 per month."
    missing = table(at, "importance", nth=0)  # Missing first: what needs attention
    assert [r["claim_text"] for r in missing] == ["Support is closed on Sundays."]
    verdicts = {r["verdict"] for r in table(at, "verdict")}
    assert verdicts == {"SUPPORTED", "CONTRADICTED"}
    summary = [c.value for c in at.caption if "matched spans" in c.value]
    assert summary == ["1 matched spans · 1 unsupported · 1 contradicted · 2 attribution mentions"]


def test_sample_page_failed_sample_and_finder(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home, "sample", run="r2", sample="beta-q2", iteration="1")
    assert at.error[0].value == "This sample failed to score"
    assert "judge timed out" in [c.value for c in at.code]
    at = app(fixture_home, "sample")
    assert "Choose a sample" in at.info[0].value
    rows = table(at, "query")
    assert [r["sample_id"] for r in rows][:2] == ["acme-q1", "acme-q1"]  # r3: two iterations
    at.button(key="sample_open").click().run()
    assert at.query_params["sample"] == "acme-q1"
    assert at.html[0].value.startswith("<div")


def test_sample_page_unknown_sample(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home, "sample", run="r2", sample="nope")
    assert "has no results" in at.warning[0].value


def test_the_sample_page_reads_the_case_from_the_warehouse_when_the_file_is_gone(
    app: AppFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from engine.settings import resolve_paths
    from evalhouse.cli import main

    csv = tmp_path / "cases.csv"
    csv.write_text(
        "query,response,expected_answer,ground_truth\n"
        '"How long is the trial?","Thirty days.","The trial lasts 30 days.",'
        '"Every plan has a 30-day free trial."\n',
        encoding="utf-8",
    )
    home = resolve_paths(tmp_path / "home")
    assert main(["run", "--test-set", str(csv), "--name", "csv", "--home", str(home.home)]) == 0
    run_id = capsys.readouterr().out.strip().splitlines()[-1]
    csv.unlink()  # moved or deleted after the run
    at = app(home, "sample", run=run_id, sample="row-1", iteration="1")
    assert "The trial lasts 30 days." in [t.value for t in at.text]
    assert "Every plan has a 30-day free trial." in at.html[1].value
    assert not any("not available" in c.value for c in at.caption)
