"""Where a fresh browser's first visit to a page spends its time, on the 1,000,000-result
warehouse, beside the empty two-page app visited the same way.

Each visit is a new chromium (nothing cached) opening the page by URL on a server that
has reported healthy (and so has warmed its pages, ``dashboard.warmup``). Per visit: the
HTML document loaded, the app's websocket opened, the page's script run on the server (from
the browser's rerun request to the last message it received), the last JavaScript file
loaded, and the page drawn (``tests.bench.dashboard_server``'s rule). The last visit runs
under Chrome's sampling profiler: the main thread's time per script file (``(program)`` is
the browser's own work: style, layout, paint, compiling). Goal: the Overview's first visit
<= 1.5 s after the server is healthy.

    python -m tests.bench.first_visit [--page NAME] [--visits N] [--warm] [--dir DIR]

``--warm`` times a later visit by URL instead: each browser has opened the page once.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.bench.dashboard import _build
from tests.bench.dashboard_server import (
    CHROMIUM,
    DRAWN,
    EMPTY_APP,
    FLAGS,
    SETTLE_S,
    _free_port,
    _wait_healthy,
)

GOAL_S = 1.5

SOCKET_LOG = """
(() => {
  const log = (window.__ehSocket = []);
  const Native = window.WebSocket;
  window.WebSocket = function (...args) {
    const ws = new Native(...args);
    ws.addEventListener('open', () => log.push(['open', performance.now()]));
    ws.addEventListener('message', () => log.push(['message', performance.now()]));
    const send = ws.send.bind(ws);
    ws.send = (data) => { log.push(['send', performance.now()]); return send(data); };
    return ws;
  };
  window.WebSocket.prototype = Native.prototype;
  Object.assign(window.WebSocket, Native);
})();
"""
"""Timestamps of the app's websocket: opened, each request sent, each message received."""

TIMELINE = """() => {
  const log = window.__ehSocket || [];
  const at = (kind) => log.filter((e) => e[0] === kind).map((e) => e[1]);
  const scripts = performance.getEntriesByType('resource').filter((r) => r.name.endsWith('.js'));
  return {
    document: performance.getEntriesByType('navigation')[0].loadEventEnd,
    open: at('open')[0] ?? null,
    sent: at('send')[0] ?? null,
    last_message: Math.max(...at('message')),
    scripts: scripts.length,
    script_bytes: scripts.reduce((n, r) => n + r.encodedBodySize, 0),
    last_script: Math.max(...scripts.map((r) => r.responseEnd)),
  };
}"""


def _visit(pw: Any, url: str, *, profile: bool, warm: bool) -> tuple[float, dict[str, Any], Any]:
    """One fresh browser's visit: seconds to drawn, its timeline (ms since navigation),
    and the main thread's CPU profile when asked for. ``warm``: the browser has opened the
    page once before (its code cached, as for a reader's later visit by URL)."""
    browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
    try:
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        if warm:
            before = context.new_page()
            before.goto(url)
            before.wait_for_function(DRAWN, arg=[SETTLE_S * 1000, None], timeout=60_000)
            before.close()
        page = context.new_page()
        page.add_init_script(SOCKET_LOG)
        cdp = None
        if profile:
            cdp = page.context.new_cdp_session(page)
            cdp.send("Profiler.enable")
            cdp.send("Profiler.setSamplingInterval", {"interval": 200})
            cdp.send("Profiler.start")
        started = time.perf_counter()
        page.goto(url)
        page.wait_for_function(DRAWN, arg=[SETTLE_S * 1000, None], timeout=60_000, polling=20)
        seconds = time.perf_counter() - started - SETTLE_S
        timeline = page.evaluate(TIMELINE)
        timeline["drawn"] = page.evaluate("() => performance.now()") - SETTLE_S * 1000
        profiled = cdp.send("Profiler.stop")["profile"] if cdp is not None else None
        return seconds, timeline, profiled
    finally:
        browser.close()


def _per_script(profile: dict[str, Any]) -> list[tuple[str, float]]:
    """Milliseconds of main-thread samples per script file (or the browser's own work)."""
    nodes = {node["id"]: node["callFrame"] for node in profile["nodes"]}
    deltas = profile["timeDeltas"]
    spent: dict[str, float] = collections.defaultdict(float)
    for i, node in enumerate(profile["samples"]):
        frame = nodes[node]
        name = frame["url"].rsplit("/", 1)[-1] or frame["functionName"] or "(native)"
        spent[name] += (deltas[i + 1] if i + 1 < len(deltas) else 0) / 1000
    return sorted(spent.items(), key=lambda item: -item[1])


def _serve(command: list[str], port: int) -> subprocess.Popen[bytes]:
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _wait_healthy(port)
    return server


def _report(label: str, visits: list[tuple[float, dict[str, Any]]]) -> float:
    seconds = [s for s, _ in visits]
    median = statistics.median(seconds)
    print(f"{label}: first visit {median:.2f} s median of {len(seconds)} "
          f"({', '.join(f'{s:.2f}' for s in seconds)})")  # fmt: skip
    for name, key in [
        ("document loaded", "document"),
        ("websocket open", "open"),
        ("page run requested", "sent"),
        ("last message (the page's run done)", "last_message"),
        ("last JavaScript file loaded", "last_script"),
        ("drawn", "drawn"),
    ]:
        values = [t[key] for _, t in visits if t.get(key) is not None]
        if values:
            print(f"  {name:36} {statistics.median(values):6.0f} ms")
    last = visits[-1][1]
    print(f"  JavaScript files: {last['scripts']}, {last['script_bytes'] / 1e6:.2f} MB")
    return median


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--results", type=int, default=1_000_000)
    parser.add_argument("--dir", type=Path, default=Path("bench-data/dashboard"))
    parser.add_argument("--page", default="", help="the page's URL path ('' is the Overview)")
    parser.add_argument("--visits", type=int, default=4)
    parser.add_argument(
        "--warm",
        action="store_true",
        help="time a second visit by URL (the browser's cache holds the page's code)",
    )
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        print(f"skipped: {CHROMIUM} is missing (apt-get install chromium)")
        return
    from playwright.sync_api import sync_playwright

    _build(args.dir, args.results)
    app = args.dir / "empty_app.py"
    app.write_text(EMPTY_APP, encoding="utf-8")
    servers = {
        "empty two-page app (the floor)": (
            [sys.executable, "-m", "streamlit", "run", str(app), "--server.headless", "true",
             "--browser.gatherUsageStats", "false", "--server.port"],
            "",
        ),
        f"dashboard, page '{args.page or 'overview'}'": (
            [sys.executable, "-m", "evalhouse.cli", "dashboard", "--home", str(args.dir),
             "--port"],
            args.page,
        ),
    }  # fmt: skip
    profile = None
    with sync_playwright() as pw:
        for label, (command, path) in servers.items():
            port = _free_port()
            server = _serve([*command, str(port)], port)
            try:
                url = f"http://127.0.0.1:{port}/{path}"
                visits = []
                for i in range(args.visits):
                    seconds, timeline, profiled = _visit(
                        pw, url, profile=i == args.visits - 1, warm=args.warm
                    )
                    visits.append((seconds, timeline))
                    profile = profiled
            finally:
                server.terminate()
                server.wait(timeout=30)
            median = _report(label, visits)
    assert profile is not None
    print("the dashboard's last visit, main thread (ms of samples, the top 12):")
    for name, ms in _per_script(profile)[:12]:
        print(f"  {ms:6.0f}  {name}")
    print(f"first visit {median:.2f} s (goal <= {GOAL_S} s)")


if __name__ == "__main__":
    main()
