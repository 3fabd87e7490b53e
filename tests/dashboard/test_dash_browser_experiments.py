"""An experiment from the browser alone, at 1024 and 1440 px: 2 candidates × 3 graders on
a 20-case set are chosen, estimated, launched against the loopback LLM, watched filling in
and opened on the Leaderboard. Screenshots go to ``test-artifacts/experiments-*.png``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.settings import resolve_paths
from tests.dashboard.fixture_home import build_empty_home
from tests.dashboard.serve import serve_dashboard
from tests.dashboard.settle import report_failure, settle, until_shown
from tests.dashboard.test_dash_browser import ARGS, ARTIFACTS, CHROMIUM
from tests.dashboard.test_dash_experiments import KEY, write_cases, write_project
from tests.loopback_llm import LoopbackLLM

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is not installed"),
]

WIDTHS = (1024, 1440)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A dashboard over a home with a 20-case set and a project, its target the loopback."""
    root = tmp_path_factory.mktemp("experiments")
    paths = build_empty_home(root / "home")
    paths.test_sets.mkdir(parents=True, exist_ok=True)
    write_cases(paths.test_sets / "twenty.jsonl", 20)
    project = write_project(root / "project")
    # slow enough to watch the grid fill in, quick enough for a test
    with (
        LoopbackLLM(delay=1.5, responder=lambda provider, body: "OK") as llm,
        pytest.MonkeyPatch.context() as env,
    ):
        env.setenv("EVALHOUSE_PROJECT", str(project))
        env.setenv("OPENAI_API_KEY", KEY)
        env.setenv("OPENAI_BASE_URL", llm.url)
        with serve_dashboard(resolve_paths(paths.home).home, root) as url:
            yield url


def _choose(main: Any, label: str, options: list[str]) -> None:
    """Pick ``options`` in the select box labelled ``label``."""
    page = main.page
    box = main.get_by_role("combobox", name=label)
    for option in options:
        listed = page.get_by_role("option", name=option, exact=True)

        def list_it(option: str = option) -> None:
            box.click()
            box.fill("")  # a lost try's text would make this one search for both
            box.press_sequentially(option[:12])

        until_shown(page, list_it, listed, each_ms=10_000)
        listed.click()
        settle(page)  # each pick reruns the page: the next box is redrawn
    page.keyboard.press("Escape")


def _shot(page: Any, name: str, width: int) -> Path:
    path = ARTIFACTS / f"experiments-{name}-{width}.png"
    page.wait_for_timeout(800)
    page.screenshot(path=str(path), full_page=True)
    return path


@pytest.mark.parametrize("width", WIDTHS)
def test_an_experiment_from_the_browser(served: str, width: int) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page(viewport={"width": width, "height": 1200})
        try:
            page.goto(f"{served}/experiments")
            main = page.get_by_test_id("stMain")
            main.get_by_text("1 · Test set").first.wait_for(timeout=90_000)
            name = main.get_by_role("textbox", name="Experiment name")
            name.fill(f"prompt check {width}")
            name.press("Enter")
            settle(page)
            _choose(main, "Candidates", ["Terse (helper)", "Polite (helper-polite)"])
            _choose(main, "Graders", ["exact", "Says OK (says-ok)", "short"])
            _choose(main, "Target model", ["openai:gpt-4o-mini"])
            main.get_by_role("button", name="Test", exact=True).nth(2).wait_for(timeout=30_000)
            until_shown(
                page,
                main.get_by_role("button", name="Estimate").click,
                main.get_by_role("button", name="Launch"),
            )
            text = main.inner_text()
            assert "calls" in text and "$" in text, text
            _shot(page, "estimate", width)
            main.get_by_role("button", name="Launch").click()
            scored = main.get_by_text("rows scored so far").first  # only while it runs
            scored.wait_for(timeout=90_000)
            # the watch redraws every 2 s: scroll by its heading, which stays put
            main.get_by_text("6 · Watch").first.scroll_into_view_if_needed()
            assert "— running" in main.inner_text(), "the grid fills in while the run goes"
            _shot(page, "watch", width)
            link = main.get_by_role("link", name="Open on the Leaderboard")
            link.wait_for(timeout=180_000)
            main.get_by_text("6 · Watch").first.scroll_into_view_if_needed()
            _shot(page, "done", width)
            link.click(timeout=10_000)  # a locator: found again if a redraw replaced it
            page.get_by_test_id("stMain").get_by_text("Prompt families").first.wait_for(
                timeout=90_000
            )
            assert "run=" in page.url, page.url
            _shot(page, "leaderboard", width)
        except Exception:
            report_failure(page, f"experiments-{width}", ARTIFACTS)
            raise
        finally:
            browser.close()
