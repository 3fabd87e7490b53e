"""The Overview as one HTML file: the verdict, the changes, a chart per headline metric and
the whole table, every data string escaped, nothing requested from anywhere."""

from __future__ import annotations

import html.parser
from datetime import datetime
from pathlib import Path

import pytest

from dashboard.report import build_report
from engine.settings import Paths
from evalhouse.cli import main
from tests.dashboard.conftest import AppFactory
from warehouse.queries import Warehouse

NOW = datetime(2026, 11, 26, 9, 0)


class Links(html.parser.HTMLParser):
    """Every URL an element of the page would fetch or open."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.scripts = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.scripts += tag == "script"
        self.urls += [v or "" for k, v in attrs if k in ("src", "href", "xlink:href", "action")]


def test_the_report_of_a_run_against_its_baseline(fixture_home: Paths) -> None:
    text = build_report(Warehouse(fixture_home.warehouse), "r2", "r1", now=NOW)
    assert text.startswith("<!DOCTYPE html>")
    assert "against baseline" in text and "r1" in text and "<svg" in text
    assert "Scores per domain" in text and "Report made 2026-11-26 09:00 UTC" in text
    links = Links()
    links.feed(text)
    assert links.scripts == 0 and links.urls == []
    assert "default-src 'none'" in text  # a browser that honours it fetches nothing at all


def test_data_strings_are_escaped(fixture_home: Paths) -> None:
    text = build_report(Warehouse(fixture_home.warehouse), "r2", None, now=NOW)
    assert "without a baseline" in text
    assert "<script>" not in text.lower().replace("&lt;script&gt;", "")


def test_the_cli_writes_it_and_refuses_an_unknown_run(
    fixture_home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.html"
    home = ["--home", str(fixture_home.home)]
    assert main(["report", "r2", "--baseline", "r1", "--output", str(out), *home]) == 0
    assert out.read_text().startswith("<!DOCTYPE html>")
    assert main(["report", "nope", "--output", str(out), *home]) == 2
    assert "no run 'nope' in the warehouse" in capsys.readouterr().err


def test_the_overview_offers_it(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home)
    assert any(b.label == "Download report (HTML)" for b in at.get("download_button"))
