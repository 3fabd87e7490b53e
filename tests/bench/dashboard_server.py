"""Peak memory of a real ``evalhouse dashboard`` process on the 1,000,000-result warehouse.

Starts the dashboard (a real Streamlit server) on a large warehouse, opens every page in
headless Debian chromium, and samples the resident memory of the server's process tree
every 50 ms. Goal: < 1 GB. (``tests.bench.dashboard`` times the page scripts with AppTest;
this one measures the process a user runs.)

    python -m tests.bench.dashboard_server [--dir bench-data/dashboard]
"""

from __future__ import annotations

import argparse
import contextlib
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

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
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        print(f"skipped: {CHROMIUM} is missing (apt-get install chromium)")
        return
    from playwright.sync_api import sync_playwright

    _build(args.dir, args.results)
    port = _free_port()
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
            page = browser.new_page()
            deadline = time.monotonic() + 60
            while True:
                try:
                    page.goto(f"http://127.0.0.1:{port}/", timeout=5000)
                    break
                except Exception:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.5)
            for name in PAGES:
                started = time.perf_counter()
                page.goto(f"http://127.0.0.1:{port}/{name}")
                try:
                    page.wait_for_selector("h1", timeout=60_000)
                except Exception:
                    page.screenshot(path="bench-data/dashboard-failed.png")
                    raise RuntimeError(f"page {name or 'overview'} showed no title") from None
                page.wait_for_function(
                    "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')",
                    timeout=60_000,
                )
                timings.append((name or "overview", time.perf_counter() - started))
            browser.close()
    finally:
        stop.set()
        sampler.join()
        server.terminate()
        server.wait(timeout=30)
    for name, seconds in timings:
        print(f"{name}: loaded in the browser in {seconds:.2f} s")
    print(
        f"dashboard server peak memory (process tree RSS): {peak / 2**20:.0f} MB (goal < 1024 MB)"
    )


if __name__ == "__main__":
    main()
