"""The trajectory view in a real browser at 1024 px: a production trace's steps and the
expected calls fit the width (no cell cut, no sideways scroll), the mismatch words show,
and markup from a tool's name or output shows as text. The screenshot is saved to
``test-artifacts/trajectory-1024.png`` for a person to look at."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from engine.settings import resolve_paths
from tests.dashboard.agent_home import HOSTILE_ID, TRACE_ID, build_agent_home
from tests.dashboard.serve import serve_dashboard
from tests.dashboard.settle import settle
from tests.dashboard.test_dash_browser import ARGS, ARTIFACTS, CHROMIUM

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is not installed"),
]

WIDTH = 1024

# How far the table reaches, and whether any cell holds more than it shows.
_FIT_JS = """
(table) => {
  const box = table.getBoundingClientRect();
  const cut = [...table.querySelectorAll('td')].filter(
    (td) => td.scrollWidth > td.clientWidth + 1).length;
  return {right: box.right, scroll: table.scrollWidth, width: table.clientWidth, cut: cut};
}
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    home = resolve_paths(tmp_path_factory.mktemp("trajectory") / "home")
    run_id = build_agent_home(home, tmp_path_factory.mktemp("trajectory-work"))
    with serve_dashboard(home.home, tmp_path_factory.mktemp("trajectory-log")) as url:
        yield url, run_id


def test_the_trajectory_view_at_1024_px(served: tuple[str, str]) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    url, run_id = served
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page(viewport={"width": WIDTH, "height": 900})
        try:
            page.goto(f"{url}/sample?run={run_id}&sample={TRACE_ID}&iteration=1")
            main = page.get_by_test_id("stMain")
            heading = main.get_by_text("Trajectory", exact=True)
            heading.wait_for(timeout=90_000)
            settle(page)
            table = main.locator("table").filter(has_text="What the agent did").first
            fit = table.evaluate(_FIT_JS)
            # Streamlit scrolls its main block, not the window: the heading goes to the top.
            heading.evaluate("(el) => el.scrollIntoView({block: 'start'})")
            page.wait_for_timeout(300)
            page.screenshot(path=str(ARTIFACTS / "trajectory-1024.png"))
            assert fit["right"] <= WIDTH and fit["scroll"] <= fit["width"] + 1, fit
            assert fit["cut"] == 0, fit
            for word in ("right", "lookup_order", "200 ms", "Expected call", "Model turn"):
                assert table.get_by_text(word).first.is_visible(), word

            page.goto(f"{url}/sample?run={run_id}&sample={HOSTILE_ID}&iteration=1")
            main.get_by_text("Trajectory", exact=True).wait_for(timeout=90_000)
            page.wait_for_timeout(500)
            table = main.locator("table").filter(has_text="What the agent did").first
            table.evaluate("(el) => el.scrollIntoView({block: 'center'})")
            page.wait_for_timeout(300)
            page.screenshot(path=str(ARTIFACTS / "trajectory-1024-wrong-tool.png"))
            fit = table.evaluate(_FIT_JS)
            assert fit["right"] <= WIDTH and fit["cut"] == 0, fit
            assert "<script>alert(1)</script>" in table.inner_text()
            assert table.locator("script, img").count() == 0
            assert table.get_by_text("wrong tool", exact=True).first.is_visible()
        finally:
            browser.close()
