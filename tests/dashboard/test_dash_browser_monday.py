"""Monday after a week of use, in a real browser at 1024 and 1440 px: the first screen names
a judge change first and never calls it "worse beyond noise"; the Overview still opens on
the weekly series after an ad-hoc launch; a mover's link lands on Compare filtered to its
domain and metric, largest drop first. Which tables still scroll sideways (their last
columns out of sight) is measured and written to ``test-artifacts/monday-overflow-*.txt``
beside the screenshots; the tables of numbers a PM reads (the Overview's scores with their
noise, the judge-drift split, every table of Compare) must not, at either width."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from engine.settings import resolve_paths
from tests.dashboard.serve import serve_dashboard
from tests.dashboard.settle import settle
from tests.dashboard.test_dash_browser import ARGS, ARTIFACTS, CHROMIUM
from tests.dashboard.week_home import build_mover_home, build_week_home

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is not installed"),
]

WIDTHS = (1024, 1440)

# The grid's scroller, or an HTML table's box: wider content than box means a sideways
# scrollbar.
_GRID_JS = """
(el) => {
  const s = el.querySelector('.dvn-scroller') || (el.matches('.eh-table') ? el : null);
  const box = el.getBoundingClientRect();
  return {scroll: s ? s.scrollWidth : null, visible: s ? s.clientWidth : null,
          right: box.right};
}
"""


def scrolled_tables(page: Any, width: int) -> list[str]:
    """Every visible table that scrolls sideways or ends past the viewport's edge: the data
    grids by their order on the page ("grid 0"), the HTML tables by name."""
    problems = []
    grids = page.get_by_test_id("stDataFrame")
    tables = page.locator(".eh-table")
    found = [(f"grid {i}", grids.nth(i)) for i in range(grids.count())]
    found += [
        (f"table {tables.nth(i).get_attribute('data-table')}", tables.nth(i))
        for i in range(tables.count())
    ]
    for name, element in found:
        if not element.is_visible():
            continue
        grid = element.evaluate(_GRID_JS)
        if grid["scroll"] is None or grid["scroll"] > grid["visible"] + 1:
            problems.append(f"{name} scrolls sideways at {width} px {grid}")
        if grid["right"] > width:
            problems.append(f"{name} ends off screen at {width} px {grid}")
    return problems


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """Two dashboards: the judge change with an ad-hoc launch, and real movers."""
    week = resolve_paths(tmp_path_factory.mktemp("monday-week") / "home")
    build_week_home(week)
    movers = resolve_paths(tmp_path_factory.mktemp("monday-movers") / "home")
    build_mover_home(movers)
    with (
        serve_dashboard(week.home, tmp_path_factory.mktemp("monday-week-log")) as week_url,
        serve_dashboard(movers.home, tmp_path_factory.mktemp("monday-movers-log")) as mover_url,
    ):
        yield week_url, mover_url


@pytest.mark.parametrize("width", WIDTHS)
def test_monday_first_screen_movers_and_tables(served: tuple[str, str], width: int) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    week_url, mover_url = served
    ARTIFACTS.mkdir(exist_ok=True)
    cut: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page(viewport={"width": width, "height": 1400})
        try:
            page.goto(week_url)
            main = page.get_by_test_id("stMain")
            main.get_by_text("Scores per domain").first.wait_for(timeout=90_000)
            settle(page)
            page.screenshot(path=str(ARTIFACTS / f"monday-overview-{width}.png"), full_page=True)
            text = main.inner_text()
            # the ad-hoc launch does not take over: the weekly series' latest run opens
            run_box = main.get_by_role("combobox", name="Run")
            assert run_box.input_value().endswith("· w2"), run_box.input_value()
            assert "no baseline" not in text.lower()
            # the judge change comes before any verdict, and is never "worse beyond noise"
            assert "Judge changed" in text
            alerts = main.get_by_test_id("stAlert")
            first = alerts.first.inner_text()
            assert "judge" in first.lower(), first
            assert "worse beyond noise" not in text
            week_cut = scrolled_tables(page, width)
            cut += [f"week overview: {c}" for c in week_cut]

            page.goto(mover_url)
            main = page.get_by_test_id("stMain")
            main.get_by_text("Scores per domain").first.wait_for(timeout=90_000)
            settle(page)
            page.screenshot(path=str(ARTIFACTS / f"monday-movers-{width}.png"), full_page=True)
            movers_cut = scrolled_tables(page, width)
            cut += [f"movers overview: {c}" for c in movers_cut]
            # the first mover's "Compare ↗" opens Compare in a new tab
            link = main.locator('[data-table="overview_verdict"] a').first
            link.wait_for(timeout=30_000)
            with page.context.expect_page() as opened:
                link.click()
            compare = opened.value
            compare.set_viewport_size({"width": width, "height": 1400})
            compare_main = compare.get_by_test_id("stMain")
            compare_main.get_by_text("Per sample").first.wait_for(timeout=90_000)
            settle(compare)
            compare.screenshot(path=str(ARTIFACTS / f"monday-compare-{width}.png"), full_page=True)
            url = compare.url
            # the page keeps only what differs from its defaults in the address: the
            # baseline is the series' previous run, so it shows in the box, not the URL
            assert "run=w2" in url and "domain=" in url, url
            baseline_box = compare_main.get_by_role("combobox", name="Baseline")
            assert baseline_box.input_value().endswith("w1"), baseline_box.input_value()
            domain = compare_main.get_by_role("combobox", name="Domain")
            assert domain.input_value() in url, (domain.input_value(), url)
            caption = compare_main.get_by_text("largest regression first").first.inner_text()
            assert "samples" in caption
            compare_cut = scrolled_tables(compare, width)
            cut += [f"compare: {c}" for c in compare_cut]
            # the per-sample table, below the fold of the page's shot
            compare_main.locator("[data-table=compare_samples]").screenshot(
                path=str(ARTIFACTS / f"monday-compare-samples-{width}.png")
            )
            compare.close()

            # an ad-hoc run added as columns (it shares no sample: its cells are n/a)
            page.goto(f"{week_url}/compare?run=w2&baseline=w1&add=z1")
            main = page.get_by_test_id("stMain")
            main.get_by_text("Per sample").first.wait_for(timeout=90_000)
            page.wait_for_timeout(1500)
            page.screenshot(path=str(ARTIFACTS / f"monday-compare-added-{width}.png"))
            main.locator("[data-table=compare_samples]").screenshot(
                path=str(ARTIFACTS / f"monday-compare-added-samples-{width}.png")
            )
            added_cut = scrolled_tables(page, width)
            cut += [f"compare, a run added: {c}" for c in added_cut]

            page.goto(f"{mover_url}/sample?run=w2")
            page.get_by_test_id("stMain").get_by_text("result rows").first.wait_for(timeout=90_000)
            settle(page)
            page.screenshot(path=str(ARTIFACTS / f"monday-finder-{width}.png"), full_page=True)
            cut += [f"finder: {c}" for c in scrolled_tables(page, width)]
        finally:
            browser.close()
    (ARTIFACTS / f"monday-overflow-{width}.txt").write_text(
        "\n".join(cut) + "\n" if cut else "no table scrolls sideways\n", encoding="utf-8"
    )
    # The week's Overview: the judge-drift split and the scores per domain with their
    # noise; the movers' Overview: the movers and the scores; Compare: all of them.
    assert not week_cut, week_cut
    assert not movers_cut, movers_cut
    assert not compare_cut, compare_cut
    assert not added_cut, added_cut
