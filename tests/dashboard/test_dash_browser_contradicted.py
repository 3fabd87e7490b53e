"""A contradicted claim in a real browser at 1024 px: the Sample page heads it
"Contradicted", apart from the missing one, and the Claims page has its own column, all
visible without scrolling sideways."""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator

import pytest

from engine.settings import Paths
from tests.dashboard.serve import serve_dashboard
from tests.dashboard.test_dash_browser import ARGS, ARTIFACTS, CHROMIUM
from tests.dashboard.test_dash_browser_monday import scrolled_tables
from tests.dashboard.test_dash_contradicted import build_claims_home

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is not installed"),
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    paths: Paths = build_claims_home(tmp_path_factory.mktemp("browser-contradicted") / "home")
    with serve_dashboard(paths.home, tmp_path_factory.mktemp("browser-contradicted-log")) as url:
        yield url


def test_contradicted_reads_contradicted_on_sample_and_claims(served: str) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page(viewport={"width": 1024, "height": 900})
        try:
            query = urllib.parse.urlencode({"run": "rk", "sample": "acme-q1", "iteration": "1"})
            page.goto(f"{served}/sample?{query}")
            main = page.get_by_test_id("stMain")
            heading = main.get_by_text("Contradicted (1)", exact=True)
            heading.wait_for(timeout=30_000)
            assert heading.is_visible()
            assert main.get_by_text("Missing (1)", exact=True).is_visible()
            assert main.get_by_text("Found (1)", exact=True).is_visible()
            # the three claim tables drawn (their accessible headers), then the picture
            main.locator("th").filter(has_text="Importance").nth(2).wait_for(
                state="attached", timeout=30_000
            )
            heading.scroll_into_view_if_needed()
            page.wait_for_timeout(500)
            page.screenshot(path=str(ARTIFACTS / "contradicted-sample-1024.png"))

            page.goto(f"{served}/claims?run=rk")
            main = page.get_by_test_id("stMain")
            main.locator('[data-table="claims_missed"]').wait_for(timeout=30_000)
            # The per-domain table, the per-query table and the most-missed claims each
            # count contradicted claims in their own column.
            headers = main.locator(".eh-table th").all_inner_texts()
            assert headers.count("Contradicted") == 3, headers
            # The per-domain counts fit at 1024 px: no sideways scroll hides a column.
            cut = scrolled_tables(page, 1024)
            assert not [c for c in cut if c.startswith("table claims_domains ")], cut
            # The per-query counts come before the long text (what scrolls is the text).
            per_query = main.locator('[data-table="claims_queries"] th').all_inner_texts()
            assert per_query.index("Missing") < per_query.index("Missing claims"), per_query
            page.screenshot(path=str(ARTIFACTS / "contradicted-claims-1024.png"))
        finally:
            browser.close()
