"""Names from data in the HTML tables, cards and inline charts, in a real browser: a domain
and an AI provider named with markup, Markdown, a formula and an icon code show as typed,
and nothing in them runs or draws (the tables are HTML passed through Markdown, so this is
the check that every cell was escaped)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from engine.lake import write_part
from engine.settings import Paths, resolve_paths
from ingest import ingest
from tests.dashboard.serve import serve_dashboard
from tests.dashboard.settle import settle
from tests.dashboard.test_dash_browser import ARGS, ARTIFACTS, CHROMIUM
from tests.factories import T0, result_record, run_record

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is not installed"),
]

DOMAIN = '<img src=x onerror="window.__pwned=1">'
"""Markup that would run a script if any cell drew it as HTML."""

PROVIDER = "$x^2$ **bold** :material/bolt: <b>b</b>"
"""A formula, Markdown, an icon code and a tag: each would change if read as Markdown."""


def _build(home: Paths) -> None:
    """Two weeks of one series: accuracy 90 then 40 in both domains (movers beyond noise)."""
    for week, run_id, accuracy in ((1, "w1", 90.0), (2, "w2", 40.0)):
        started = T0 + timedelta(days=7 * (week - 1))
        write_part(home.lake, "runs", run_id, 0, [run_record(run_id, started, name=f"week {week}")])
        rows = [
            result_record(
                run_id, f"{n}-q{i}", domain=domain, ai_provider=PROVIDER, accuracy=accuracy
            )
            for n, domain in enumerate((DOMAIN, "plain.example"))
            for i in range(8)
        ]
        write_part(home.lake, "results", run_id, 1, rows)
    ingest(home)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = resolve_paths(tmp_path_factory.mktemp("hostile-tables") / "home")
    _build(home)
    with serve_dashboard(home.home, tmp_path_factory.mktemp("hostile-tables-log")) as url:
        yield url


def test_names_from_data_show_as_typed_and_nothing_runs(served: str) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    ARTIFACTS.mkdir(exist_ok=True)
    dialogs: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 1400})
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        try:
            page.goto(served)
            main = page.get_by_test_id("stMain")
            main.get_by_text("Scores per domain").wait_for(timeout=90_000)
            settle(page)
            page.screenshot(path=str(ARTIFACTS / "hostile-tables-overview.png"))
            movers = main.locator('[data-table="overview_verdict"]')
            scores = main.locator('[data-table="overview_table"]')
            assert DOMAIN in movers.inner_text() and DOMAIN in scores.inner_text()
            assert main.locator(".eh-table img, .eh-cards img").count() == 0
            # the mover's link carries the name, encoded, into Compare
            href = movers.locator("a").first.get_attribute("href") or ""
            assert "onerror" not in href or "%3Cimg" in href, href

            page.goto(f"{served}/compare?run=w2&baseline=w1")
            main = page.get_by_test_id("stMain")
            main.get_by_text("Per sample").first.wait_for(timeout=90_000)
            settle(page)
            domains = main.locator('[data-table="compare_domains"]')
            assert DOMAIN in domains.inner_text()
            assert main.locator(".eh-table img, .eh-cards img").count() == 0

            page.goto(f"{served}/attribution?run=w2")
            main = page.get_by_test_id("stMain")
            main.get_by_text("Trend").first.wait_for(timeout=90_000)
            settle(page)
            page.screenshot(path=str(ARTIFACTS / "hostile-tables-attribution.png"))
            rates = main.locator('[data-table="attribution_rates"]').inner_text()
            assert PROVIDER in rates and DOMAIN in rates
            # the charts' labels stay inside the charts, as text (cut with "…" when long)
            charts = main.locator(".eh-chart")
            assert charts.count() == 2
            assert all(c.evaluate("e => e.children.length") == 1 for c in charts.all())
            legend = charts.first.locator("text").last.inner_html()
            assert legend.startswith("$x^2$ **bold** :material/"), legend
            assert main.locator("svg img, .eh-table img, .katex, .eh-chart strong").count() == 0
            assert page.evaluate("() => window.__pwned") is None
            assert not dialogs, dialogs
        finally:
            browser.close()
