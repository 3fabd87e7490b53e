"""Where the Compare page spends its time on a large warehouse: each of its queries (cold,
on a fresh connection), the whole page script with AppTest, cold (caches cleared) and on
a later visit (same process, cached), with the rows each table sends to the browser; with
``--browser``, a real ``evalhouse dashboard`` in headless chromium: the first visit by URL
and a later one by the sidebar link from the Overview (``tests.bench.dashboard_server``'s
measure, for this page alone).

    python -m tests.bench.compare_page [--results 200000] [--dir bench-data/compare]
        [--add N] [--browser]
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st

from engine.settings import resolve_paths
from tests.bench.dashboard import _build, _page_run
from tests.dashboard.conftest import html_tables
from warehouse import queries as q
from warehouse.queries import Warehouse


def _timed(label: str, fn: Callable[[], Any]) -> Any:
    started = time.perf_counter()
    out = fn()
    rows = getattr(out, "height", None)
    print(
        f"query {label}: {time.perf_counter() - started:.3f} s"
        + (f", {rows} rows" if rows is not None else "")
    )
    return out


def browser_visits(home: Path, query: str) -> tuple[float, float]:
    """Seconds to draw Compare (with ``query``) on a fresh server: first by URL, then again
    by the sidebar link from the Overview."""
    import subprocess
    import sys

    from playwright.sync_api import sync_playwright

    from tests.bench import dashboard_server as ds

    port = ds._free_port()
    cmd = [sys.executable, "-m", "evalhouse.cli", "dashboard", "--home", str(home)]
    server = subprocess.Popen(
        [*cmd, "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=ds.CHROMIUM, args=ds.FLAGS)
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            ds._wait_healthy(port)
            ds._cold(page, port, "")  # the app and the chart library into the browser
            cold, title = ds._cold(page, port, f"compare?{query}")
            ds._cold(page, port, "")
            warm = ds._warm(page, "compare", title)
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    return cold, warm


def main() -> None:
    """Build (once) the warehouse, then time Compare's queries and page."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--results", type=int, default=200_000)
    parser.add_argument("--dir", type=Path, default=Path("bench-data/compare"))
    parser.add_argument("--add", type=int, default=0, help="runs added as columns")
    parser.add_argument("--browser", action="store_true", help="also time a real server")
    args = parser.parse_args()
    home = args.dir.resolve()
    _build(home, args.results)
    os.environ["EVALHOUSE_HOME"] = str(home)
    wh = Warehouse(resolve_paths(home).warehouse)
    run_ids = list(q.runs(wh)["run_id"])
    run, base, added = run_ids[0], run_ids[1], tuple(run_ids[2 : 2 + args.add])
    print(f"challenger {run}, baseline {base}, added {list(added)}")
    m = {"metric": "accuracy", "tolerance": 5.0}
    from warehouse import compare_queries as cq  # after the build: it imports nothing heavy

    _timed("compare_counts", lambda: q.compare_counts(wh, run, base, **m))
    _timed("compare_samples", lambda: cq.compare_samples(wh, run, base, added=added, **m))
    _timed("compare_group_fields", lambda: cq.compare_group_fields(wh, run))
    _timed("compare_groups", lambda: cq.compare_groups(wh, (run, *added), base, **m))
    query = {"run": run, "baseline": base}
    if added:
        query["add"] = ",".join(added)
    _page_run("overview", {})  # imports and first connections, not counted
    st.cache_data.clear()
    at, cold = _page_run("compare", query)
    started = time.perf_counter()
    at.run()
    warm = time.perf_counter() - started
    sent = [f"grid {f.value.shape[0]}x{f.value.shape[1]}" for f in at.dataframe]
    sent += [f"HTML {len(rows)}x{len(header)}" for _, header, rows in html_tables(at)]
    print(f"page compare: cold {cold:.2f} s, later visit {warm:.3f} s; tables sent {sent}")
    if args.browser:
        visit = "&".join(f"{k}={v}" for k, v in query.items())
        first, later = browser_visits(home, visit)
        print(f"browser compare: first visit {first:.2f} s, later visit {later:.2f} s")


if __name__ == "__main__":
    main()
