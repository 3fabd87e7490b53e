"""Dashboard benchmark: every page's script run with AppTest, cold (caches cleared) and
warm, on a 1,000,000-result warehouse from ``tests.bench.lake_gen``; and the peak memory of
this process, which is the Streamlit process here (AppTest runs the app in-process).

    python -m tests.bench.dashboard [--results N] [--dir bench-data/dashboard]

Goals: cold <= 1.5 s, warm <= 0.3 s per page, peak memory < 1 GB.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest

from engine.settings import resolve_paths
from ingest import ingest
from tests.bench.lake_gen import generate
from warehouse.queries import Warehouse, runs, table_counts

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "streamlit_app.py")
PAGES = [
    "overview",
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
"""Every page of ``dashboard/streamlit_app.py``, in its menu order."""


def _build(home: Path, results: int) -> None:
    paths = resolve_paths(home)
    marker = home / f".built-{results}"
    if marker.exists():
        return
    started = time.perf_counter()
    generate(paths.lake, results=results)
    report = ingest(paths)
    marker.write_text("ok")
    print(f"built warehouse: {report.summary()} ({time.perf_counter() - started:.0f} s total)")


def _page_run(page: str, query: dict[str, str]) -> tuple[AppTest, float]:
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in query.items():
        at.query_params[key] = value
    at.switch_page(f"app_pages/{page}.py")
    started = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - started
    if at.exception:
        raise RuntimeError(f"{page}: {at.exception[0].value}")
    return at, elapsed


def main() -> None:
    """Build (once) the large warehouse, then time every page cold and warm."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--results", type=int, default=1_000_000)
    parser.add_argument("--dir", type=Path, default=Path("bench-data/dashboard"))
    args = parser.parse_args()
    home = args.dir.resolve()
    _build(home, args.results)
    os.environ["EVALHOUSE_HOME"] = str(home)
    wh = Warehouse(resolve_paths(home).warehouse)
    latest = str(runs(wh)["run_id"][0])
    sample = wh.sql(
        "SELECT sample_id FROM results WHERE run_id = $r ORDER BY sample_id LIMIT 1", {"r": latest}
    ).frame["sample_id"][0]
    counts = table_counts(wh)
    print("rows:", ", ".join(f"{t}={n:,}" for t, n in counts.iter_rows()))
    _page_run("overview", {})  # imports and first connections, not counted
    worst_cold = worst_warm = 0.0
    for page in PAGES:
        query = {"run": latest, "sample": str(sample), "iteration": "1"} if page == "sample" else {}
        st.cache_data.clear()
        at, cold = _page_run(page, query)
        started = time.perf_counter()
        at.run()
        warm = time.perf_counter() - started
        worst_cold, worst_warm = max(worst_cold, cold), max(worst_warm, warm)
        print(f"page {page}: cold {cold:.2f} s, warm {warm:.3f} s")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"worst cold: {worst_cold:.2f} s (goal <= 1.5 s)")
    print(f"worst warm: {worst_warm:.3f} s (goal <= 0.3 s)")
    print(f"peak memory of the Streamlit (AppTest) process: {peak_mb:.0f} MB (goal < 1024 MB)")


if __name__ == "__main__":
    main()
