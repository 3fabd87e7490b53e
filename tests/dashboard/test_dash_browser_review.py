"""Human review in a real browser: a person marks a sample on the Sample page, saves, runs
ingest from the page, and the Judge agreement page shows the review. Nothing is fetched
from outside 127.0.0.1; screenshots go to ``test-artifacts/``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.settings import Paths
from tests.dashboard.fixture_home import build_fixture_home
from tests.dashboard.serve import serve_dashboard
from tests.dashboard.settle import settle
from tests.dashboard.test_dash_browser import (
    ARGS,
    ARTIFACTS,
    CHROMIUM,
    LOOPBACK,
    WIDTH,
    _host,
    hidden_columns,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is not installed"),
]

FORM = "review_r2_acme-q1_1_"
"""Widget key prefix of acme-q1's review form (Streamlit gives each keyed widget a
``st-key-<key>`` class)."""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Paths]]:
    """The dashboard over a fixture home of this module's own (the test writes its lake)."""
    paths = build_fixture_home(tmp_path_factory.mktemp("review") / "home")
    with serve_dashboard(paths.home, tmp_path_factory.mktemp("review-log")) as url:
        yield url, paths


def _pick(page: object, key: str, label: str) -> None:
    group = page.locator(f".st-key-{key}")  # type: ignore[attr-defined]
    group.get_by_text(label, exact=True).click()


def test_review_in_browser_shows_on_agreement_page(served: tuple[str, Paths]) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    url, paths = served
    ARTIFACTS.mkdir(exist_ok=True)
    foreign: list[str] = []
    cut: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page(viewport={"width": WIDTH, "height": 2400})
        page.on(
            "request",
            lambda r: None if _host(r.url) in (None, *LOOPBACK) else foreign.append(r.url),
        )
        try:
            page.goto(f"{url}/sample?run=r2&sample=acme-q1&iteration=1")
            main = page.get_by_test_id("stMain")
            main.get_by_text("Human review").wait_for(timeout=90_000)
            _pick(page, f"{FORM}_response", "incorrect")
            _pick(page, f"{FORM}_claim_c1", "found")
            _pick(page, f"{FORM}_claim_c2", "contradicted")
            _pick(page, f"{FORM}_verdict_0", "agree")
            _pick(page, f"{FORM}_verdict_1", "disagree")
            page.locator(f".st-key-{FORM}_comment textarea").fill("Support is closed on Sundays")
            page.locator(f".st-key-{FORM}_reviewer input").fill("Browser Reviewer")
            page.get_by_role("button", name="Save review").click()
            main.get_by_text("Saved 5 item reviews by Browser Reviewer").wait_for(timeout=60_000)
            page.screenshot(path=str(ARTIFACTS / "review-saved.png"), full_page=True)
            assert len(list((paths.lake / "reviews").rglob("part-*.parquet"))) == 1

            # No "Ingest now": the save starts an ingest in the background, so the review
            # reaches the sample page and Judge agreement by itself (reload until it has).
            for page_url, shown in (
                (
                    f"{url}/sample?run=r2&sample=acme-q1&iteration=1",
                    "5 item reviews (each reviewer's latest per item)",
                ),
                (f"{url}/agreement", "Most disputed: acme-q1 in run r2 (2 of 5 labelled items"),
            ):
                for _ in range(12):
                    page.goto(page_url)
                    main = page.get_by_test_id("stMain")
                    try:
                        main.get_by_text(shown).wait_for(timeout=10_000)
                        break
                    except sync_api.TimeoutError:
                        continue
                main.get_by_text(shown).wait_for(timeout=10_000)
                if "sample" in page_url:
                    settle(page)
                    page.screenshot(path=str(ARTIFACTS / "review-ingested.png"), full_page=True)
                    cut += [f"sample: {p}" for p in hidden_columns(page)]
            main.get_by_text("Review queue").first.wait_for(timeout=90_000)
            settle(page)  # the tables have finished drawing
            page.screenshot(path=str(ARTIFACTS / f"page-agreement-{WIDTH}.png"), full_page=True)
            cut += [f"agreement: {p}" for p in hidden_columns(page)]

            page.goto(f"{url}/runs")
            main = page.get_by_test_id("stMain")
            main.get_by_text("Rename, tag, move to another series or archive").click()
            main.get_by_label("Your name").wait_for(timeout=90_000)  # built when opened
            settle(page)
            page.screenshot(path=str(ARTIFACTS / f"page-runs-labels-{WIDTH}.png"), full_page=True)
            cut += [f"runs: {p}" for p in hidden_columns(page)]
        finally:
            browser.close()
    assert cut == [], cut
    assert foreign == [], foreign


def test_artifacts_folder_is_the_repositorys() -> None:
    assert Path(ARTIFACTS).name == "test-artifacts"


def test_search_finds_a_planted_phrase_and_thumbs_review_it(served: tuple[str, Paths]) -> None:
    """A PM types a phrase from one answer, finds that one sample, gives it a thumbs down
    with a comment from the list, and the sample's full form then shows that label."""
    sync_api = pytest.importorskip("playwright.sync_api")
    url, paths = served
    ARTIFACTS.mkdir(exist_ok=True)
    before = len(list((paths.lake / "reviews").rglob("part-*.parquet")))
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page(viewport={"width": 1024, "height": 1800})
        try:
            page.goto(f"{url}/sample?run=r2")
            main = page.get_by_test_id("stMain")
            search = page.locator(".st-key-sample_search input")
            search.wait_for(timeout=90_000)
            search.fill("open on Sundays")
            search.press("Enter")
            main.get_by_text("1 result rows; page 1 of 1").wait_for(timeout=60_000)
            page.wait_for_url("**q=open+on+Sundays**", timeout=30_000)
            main.get_by_text("Quick review of acme-q1").wait_for(timeout=30_000)
            main.get_by_role("radio", name="Thumbs down").click()
            main.get_by_placeholder("Comment (optional)").fill("closed on Sundays")
            main.get_by_placeholder("Your name").fill("Browser PM")
            main.get_by_role("button", name="Save", exact=True).click()
            main.get_by_text("Saved: acme-q1 is incorrect, by Browser PM.").wait_for(timeout=60_000)
            settle(page)
            page.screenshot(path=str(ARTIFACTS / "quick-review-1024.png"), full_page=True)
            assert len(list((paths.lake / "reviews").rglob("part-*.parquet"))) == before + 1

            # the same browser session: the sample's full form shows the saved label
            page.get_by_role("button", name="Open sample").click()
            main.get_by_text("Human review").wait_for(timeout=90_000)
            chosen = page.locator(f".st-key-{FORM}_response input[type=radio]:checked")
            chosen.wait_for(state="attached", timeout=30_000)
            assert chosen.evaluate("e => e.closest('label').innerText").strip() == "incorrect"
            name = page.locator(f".st-key-{FORM}_reviewer input")
            assert name.input_value() == "Browser PM"
        finally:
            browser.close()


def test_the_overview_report_and_table_download_when_clicked(
    served: tuple[str, Paths],
) -> None:
    """The report and the table's CSV are built when their button is clicked: the report is
    the whole page in one file, the CSV the table as shown."""
    sync_api = pytest.importorskip("playwright.sync_api")
    url, _ = served
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page(accept_downloads=True)
        try:
            page.goto(url)
            button = page.get_by_role("button", name="Download report (HTML)")
            button.wait_for(timeout=90_000)
            with page.expect_download(timeout=60_000) as info:
                button.click()
            html = Path(info.value.path()).read_text(encoding="utf-8")
            settle(page)
            with page.expect_download(timeout=60_000) as info:
                page.get_by_role("button", name="Download CSV").first.click()
            csv = Path(info.value.path()).read_text(encoding="utf-8")
            name = info.value.suggested_filename
        finally:
            browser.close()
    assert html.startswith("<!DOCTYPE html>") and "r2" in html
    assert "<script" not in html.lower()
    assert name.startswith("overview-") and name.endswith(".csv")
    header, *rows = csv.splitlines()
    assert header.startswith("Domain,") and any(r.startswith("acme.example,") for r in rows)
