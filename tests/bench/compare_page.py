"""Where the Compare page spends its time on a large warehouse: each of its queries (cold,
on a fresh connection) and the whole page script with AppTest, cold (caches cleared) and on
a later visit (same process, cached), with the rows each table sends to the browser.

    python -m tests.bench.compare_page [--results 200000] [--dir bench-data/compare]
        [--add N]
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
from warehouse import compare_queries as cq
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


def main() -> None:
    """Build (once) the warehouse, then time Compare's queries and page."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--results", type=int, default=200_000)
    parser.add_argument("--dir", type=Path, default=Path("bench-data/compare"))
    parser.add_argument("--add", type=int, default=0, help="runs added as columns")
    args = parser.parse_args()
    home = args.dir.resolve()
    _build(home, args.results)
    os.environ["EVALHOUSE_HOME"] = str(home)
    wh = Warehouse(resolve_paths(home).warehouse)
    run_ids = list(q.runs(wh)["run_id"])
    run, base, added = run_ids[0], run_ids[1], tuple(run_ids[2 : 2 + args.add])
    print(f"challenger {run}, baseline {base}, added {list(added)}")
    m = {"metric": "accuracy", "tolerance": 5.0}
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
    sent = [f"{f.value.shape[0]}x{f.value.shape[1]}" for f in at.dataframe]
    print(f"page compare: cold {cold:.2f} s, later visit {warm:.3f} s; tables sent {sent}")


if __name__ == "__main__":
    main()
