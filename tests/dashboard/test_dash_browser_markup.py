"""Planted markup in a real browser: the served dashboard shows the text of
a hostile sample literally; no image, link, formula or icon is drawn from it and the
browser asks none of the hosts planted in it."""

from __future__ import annotations

import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from dashboard.components.safe import WORD_JOINER
from engine.settings import Paths
from tests.dashboard.serve import serve_dashboard
from tests.dashboard.test_dash_browser import ARGS, CHROMIUM
from tests.dashboard.test_dash_safe_text import (
    CLAIM,
    DOMAIN,
    PROVIDER,
    RUN_NAME,
    SAMPLE_ID,
    build_hostile_home,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is not installed"),
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Paths]]:
    paths = build_hostile_home(tmp_path_factory.mktemp("browser-markup") / "home")
    with serve_dashboard(paths.home, tmp_path_factory.mktemp("browser-markup-log")) as url:
        yield url, paths


def _shown(locator: Any) -> str:
    """The text a person reads (the invisible word joiner left out)."""
    return str(locator.inner_text()).replace(WORD_JOINER, "").strip()


def test_planted_markup_shows_as_text(served: tuple[str, Paths]) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    url, _paths = served
    foreign: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page(viewport={"width": 1500, "height": 1100})
        page.on(
            "request",
            lambda r: (
                None
                if r.url.startswith(url) or r.url.startswith("data:")
                else foreign.append(r.url)
            ),
        )
        try:
            query = urllib.parse.urlencode({"run": "H", "sample": SAMPLE_ID, "iteration": "1"})
            page.goto(f"{url}/sample?{query}")
            main = page.get_by_test_id("stMain")
            # the heading's own text (Streamlit adds an anchor link beside it)
            heading = main.locator("h3 [data-heading-text]").filter(has_text="198.51.100.7")
            heading.first.wait_for(timeout=30_000)
            assert _shown(heading.first) == f"{SAMPLE_ID} · {DOMAIN} · {PROVIDER}"
            flags = main.get_by_text("Flags: ").first
            assert _shown(flags) == f"Flags: {CLAIM}"
            for markup in (heading.first, flags):
                for tag in ("img", "a", "strong", "em", "del", "code", ".katex", "h1"):
                    assert markup.locator(tag).count() == 0, tag
                assert markup.locator("[data-testid='stIconMaterial']").count() == 0

            # A run name (from --name) in the run picker: option text, not Markdown.
            run_box = main.get_by_role("combobox", name="Run")
            assert run_box.input_value().startswith(f"{RUN_NAME} · ")
            run_box.click()
            options = page.get_by_role("option")
            options.first.wait_for(timeout=10_000)
            assert _shown(options.first).startswith(f"{RUN_NAME} · ")
            assert options.first.locator("img, a, strong").count() == 0
            page.keyboard.press("Escape")

            page.goto(f"{url}/claims")
            link = page.get_by_test_id("stPageLink").first
            link.wait_for(timeout=30_000)
            assert _shown(link).endswith(f"Open sample {SAMPLE_ID} (H, iteration 1)")
            assert link.locator("img").count() == 0
        finally:
            browser.close()
    # Nothing planted was fetched, and nothing at all left 127.0.0.1 (the page icon is a
    # shipped PNG, not a Material icon Streamlit would fetch from fonts.gstatic.com).
    planted = ("198.51.100.7", "evil.example")
    assert [u for u in foreign if any(h in u for h in planted)] == []
    assert foreign == []
