"""Page timings, peak memory and CPU of a real ``evalhouse dashboard`` process on the
1,000,000-result warehouse (the server's CPU per page visit, and per page left open).

Starts the dashboard (a real Streamlit server) on a large warehouse, opens every page in
headless Debian chromium three times, cold (the page's first visit by a browser since the
server started, by URL; the server has visited its pages itself before saying it is
healthy, ``dashboard.warmup``, so this is the browser's first load of what the page
draws), warm by URL (the same address opened again right after the page itself, as a
reload does: the browser loads the app and the server runs the page with its queries
cached, the measure the issue's floor was taken with; the median of ``AGAIN`` visits) and
warm by click (the sidebar link from the page before: the app already loaded,
only the page's script and drawing), each timed until the last element is drawn (no
script running, no skeleton left). Goals: cold <= 1.5 s, warm <= 0.5 s per page, and
< 1 GB resident for the server's process tree, sampled every 50 ms. The first page a
browser opens also loads the code of the elements it draws (grids, widgets, Markdown with
HTML: about a second here, once per browser). ``tests.bench.dashboard`` times the page
scripts with AppTest; this one measures the process a user runs.

    python -m tests.bench.dashboard_server [--dir bench-data/dashboard] [--settle S]
"""

from __future__ import annotations

import argparse
import contextlib
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil

from tests.bench.dashboard import _build

CHROMIUM = "/usr/bin/chromium"
PAGES = [
    "",
    "trends",
    "compare",
    "leaderboard",
    "claims",
    "sample",
    "conversations",
    "attribution",
    "experiments",
    "runs",
    "agreement",
    "sql",
]
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


COLD_GOAL_S = 1.5
WARM_GOAL_S = 0.5
FLOOR_GOAL = 1.5
"""Each page's time over the empty app's, cold and warm."""

SETTLE_S = 0.15
"""A page counts as drawn once its element count has held this long (subtracted again):
Streamlit shows no "running" sign for its first few milliseconds."""

DRAWN = """([settle, title]) => {
    const h1 = document.querySelector('h1');
    const busy = document.querySelector('[data-testid="stStatusWidget"]')
        || document.querySelector('[data-testid="stSkeleton"]')
        || !h1 || (title !== null && h1.innerText.trim() !== title);
    const count = document.querySelectorAll('[data-testid="stElementContainer"]').length;
    const now = performance.now();
    if (busy || count !== window.__evalhouseCount) {
        window.__evalhouseCount = count;
        window.__evalhouseSince = now;
        return false;
    }
    return now - window.__evalhouseSince >= settle;
}"""
"""Whether the page is drawn: its title (``title``, when known), no script running, no
placeholder, and no element added for ``settle`` ms."""


def _wait_healthy(port: int) -> None:
    """Until the server answers its health check (not a page: a visit of ours would warm
    the browser's cache)."""
    import urllib.request

    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def _drawn(page: Any, name: str, title: str | None) -> None:
    try:
        page.wait_for_function(DRAWN, arg=[SETTLE_S * 1000, title], timeout=60_000, polling=20)
    except Exception:
        page.screenshot(path="bench-data/dashboard-failed.png")
        raise RuntimeError(f"page {name or 'overview'} was not drawn in 60 s") from None


def _cold(page: Any, port: int, name: str) -> tuple[float, str]:
    """A first visit by URL (the browser loads the app, the server runs the page for the
    first time): seconds to the last element drawn, and the page's title."""
    started = time.perf_counter()
    page.goto(f"http://127.0.0.1:{port}/{name}")
    _drawn(page, name, None)
    seconds = time.perf_counter() - started - SETTLE_S
    return seconds, str(page.locator("h1").first.inner_text()).strip()


AGAIN = 3
"""Visits by URL per page, each right after the page itself; their median is reported.
Measured after the page before it in the list, a page's time carried that page's leaving
(its document torn down, its memory collected): up to 0.2 s after a heavy page, which the
empty app's pages, each after an empty page, never paid. One visit also moved a page by up
to 0.3x between runs."""


VISITS = 3 + AGAIN
"""Visits per page: cold, one by URL before the timed ones, ``AGAIN`` by URL, by click."""


def _again(page: Any, port: int, name: str) -> float:
    """Median seconds of ``AGAIN`` visits of ``name`` by URL, each right after itself."""
    page.goto(f"http://127.0.0.1:{port}/{name}")
    _drawn(page, name, None)
    return statistics.median(_cold(page, port, name)[0] for _ in range(AGAIN))


def _warm(page: Any, name: str, title: str, pages: list[str] = PAGES) -> float:
    """A later visit the way a reader moves, by the sidebar link, from another page."""
    link = page.locator('[data-testid="stSidebarNav"] a').nth(pages.index(name))
    started = time.perf_counter()
    link.click()
    _drawn(page, name, title)
    return time.perf_counter() - started - SETTLE_S


EMPTY_APP = """
import streamlit as st

def first() -> None:
    st.title("Empty A")
    st.write("Nothing here.")

def second() -> None:
    st.title("Empty B")
    st.write("Nothing here either.")

st.navigation([st.Page(first, title="A", default=True), st.Page(second, title="B")]).run()
"""
"""The floor: the least a two-page Streamlit app costs a browser on this machine."""


def _floor(browser: Any, root: Path) -> tuple[float, float, float, float]:
    """Mean cold, warm-by-URL and warm-by-click seconds of the empty app's two pages, timed
    as the dashboard's, and the cold time of its first page alone (the browser's first)."""
    app = root / "empty_app.py"
    app.write_text(EMPTY_APP, encoding="utf-8")
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(app), "--server.port", str(port),
         "--server.headless", "true", "--browser.gatherUsageStats", "false"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        _wait_healthy(port)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        names = ["", "second"]
        colds = {n: _cold(page, port, n) for n in names}
        by_url = [_again(page, port, n) for n in names]
        warms = [_warm(page, n, colds[n][1], names) for n in names]
        page.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    cold = sum(c for c, _ in colds.values()) / len(names)
    return cold, sum(by_url) / len(by_url), sum(warms) / len(warms), colds[""][0]


def _tree_cpu(proc: psutil.Process) -> float:
    """CPU seconds (user and system) of ``proc`` and its children so far."""
    total = 0.0
    for p in [proc, *proc.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):
            times = p.cpu_times()
            total += times.user + times.system
    return total


IDLE_TABS = 8
IDLE_S = 20.0


def _idle_cpu(browser: Any, port: int, proc: psutil.Process, tabs: int) -> float:
    """The server's CPU, in ms a second, while ``tabs`` Overviews stay open untouched."""
    pages = [browser.new_page(viewport={"width": 1440, "height": 900}) for _ in range(tabs)]
    for page in pages:
        page.goto(f"http://127.0.0.1:{port}/")
        _drawn(page, "", None)
    time.sleep(2)
    before = _tree_cpu(proc)
    time.sleep(IDLE_S)
    spent = _tree_cpu(proc) - before
    for page in pages:
        page.close()
    return spent / IDLE_S * 1000


def _tree_rss(proc: psutil.Process) -> int:
    total = 0
    for p in [proc, *proc.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):
            total += p.memory_info().rss
    return total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--results", type=int, default=1_000_000)
    parser.add_argument("--dir", type=Path, default=Path("bench-data/dashboard"))
    parser.add_argument(
        "--settle",
        type=float,
        default=0.0,
        help="seconds between the server's first health answer and the first page (0: the "
        "first visitor of a server that has just started)",
    )
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        print(f"skipped: {CHROMIUM} is missing (apt-get install chromium)")
        return
    from playwright.sync_api import sync_playwright

    _build(args.dir, args.results)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        floor_cold, floor_url, floor_warm, floor_first = _floor(browser, args.dir)
        browser.close()
    port = _free_port()
    started = time.monotonic()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "evalhouse.cli",
            "dashboard",
            "--home",
            str(args.dir),
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    proc = psutil.Process(server.pid)
    peak = 0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, _tree_rss(proc))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    timings = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            _wait_healthy(port)
            to_healthy = time.monotonic() - started
            cpu_at_healthy = _tree_cpu(proc)
            time.sleep(args.settle)
            titles = {}
            colds = {}
            for name in PAGES:
                colds[name], titles[name] = _cold(page, port, name)
            by_url = {name: _again(page, port, name) for name in PAGES}
            # each page from the one before it (the Overview from the last), caches warm
            for name in PAGES:
                warm = _warm(page, name, titles[name])
                timings.append((name or "overview", colds[name], by_url[name], warm))
            visits_cpu = _tree_cpu(proc) - cpu_at_healthy
            page.close()
            idle = {tabs: _idle_cpu(browser, port, proc, tabs) for tabs in (0, IDLE_TABS)}
            browser.close()
    finally:
        stop.set()
        sampler.join()
        server.terminate()
        server.wait(timeout=30)
    print(
        f"empty two-page app (the floor): cold {floor_cold:.2f} s, warm by URL "
        f"{floor_url:.2f} s, warm by click {floor_warm:.2f} s"
    )
    for name, cold, url, warm in timings:
        print(
            f"{name}: cold {cold:.2f} s = {cold / floor_cold:.2f}x floor, warm by URL "
            f"{url:.2f} s = {url / floor_url:.2f}x, warm by click {warm:.2f} s = "
            f"{warm / floor_warm:.2f}x (goals <= {FLOOR_GOAL}x; cold <= {COLD_GOAL_S} s, "
            f"warm <= {WARM_GOAL_S} s)"
        )
    worst = max(max(c / floor_cold, u / floor_url) for _, c, u, _ in timings)
    print(
        f"slowest page against the floor, cold and warm by URL: {worst:.2f}x "
        f"(goal <= {FLOOR_GOAL}x)"
    )
    worst = max(w / floor_warm for *_, w in timings)
    print(f"slowest page against the floor, warm by click: {worst:.2f}x (goal <= {FLOOR_GOAL}x)")
    print(f"first visit after healthy (the Overview, cold): {timings[0][1]:.2f} s (goal <= 1.5 s)")
    print(
        f"the browser's first page of each app: the Overview {timings[0][1]:.2f} s, the empty "
        f"app's {floor_first:.2f} s: {timings[0][1] / floor_first:.2f}x (the floor above is the "
        "mean of the empty app's first page and its second, whose app code was loaded)"
    )
    print(f"server start to healthy (imports and the pages' warm-up): {to_healthy:.2f} s")
    print(
        f"server CPU per page visit (the {VISITS * len(PAGES)} visits above, the sidebar's "
        f"refreshes while open included): {visits_cpu / (VISITS * len(PAGES)) * 1000:.0f} ms"
    )
    per_tab = (idle[IDLE_TABS] - idle[0]) / IDLE_TABS
    print(
        f"server CPU with pages left open: {idle[0]:.0f} ms/s with none, {idle[IDLE_TABS]:.0f} "
        f"ms/s with {IDLE_TABS} Overviews open: {per_tab:.1f} ms/s per open page"
    )
    met = sum(c <= COLD_GOAL_S and w <= WARM_GOAL_S for _, c, _, w in timings)
    print(f"pages within both goals: {met}/{len(timings)}")
    print(
        f"dashboard server peak memory (process tree RSS): {peak / 2**20:.0f} MB (goal < 1024 MB)"
    )


if __name__ == "__main__":
    main()
