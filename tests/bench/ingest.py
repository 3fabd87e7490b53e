"""Ingest benchmark: 1,000,000 results with ~5 claims each.

Prints, from one run: ingest time as a ratio to DuckDB's own CTAS over the same files
(goal <= 1.3), a second ingest with nothing new (goal < 1 s), the ingest process's peak
memory (goal < 1.5 GB) and one run's domain_scores query time (goal < 200 ms).

    python -m tests.bench.ingest [--results N]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

from engine.lake import list_parts
from engine.settings import resolve_paths
from tests.bench.lake_gen import generate

CHILD = """
import json, resource, sys, time
from engine.settings import resolve_paths
from ingest import ingest
paths = resolve_paths(sys.argv[1])
t = time.perf_counter(); report = ingest(paths); first = time.perf_counter() - t
t = time.perf_counter(); again = ingest(paths); second = time.perf_counter() - t
peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"first": first, "second": second, "peak_mb": peak_kb / 1024,
                  "rows": report.rows, "second_files": again.files_loaded}))
"""


def _ctas_seconds(lake: Path, target: Path) -> float:
    by_table: dict[str, list[str]] = {}
    for part in list_parts(lake):
        by_table.setdefault(part.table, []).append(str(part.path))
    con = duckdb.connect(
        str(target), config={"threads": 2, "memory_limit": "1GB", "preserve_insertion_order": False}
    )
    started = time.perf_counter()
    for table, files in by_table.items():
        con.execute(
            f'CREATE TABLE "{table}" AS SELECT * FROM read_parquet($f, union_by_name = true, '
            "hive_partitioning = false)",
            {"f": files},
        )
    con.execute("CHECKPOINT")
    elapsed = time.perf_counter() - started
    con.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--results", type=int, default=1_000_000)
    parser.add_argument("--keep", type=Path, help="keep the generated home here")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="evalhouse-bench-"))
    paths = resolve_paths(root / "home")
    if not paths.lake.exists():
        t = time.perf_counter()
        generate(paths.lake, args.results)
        print(f"generated {args.results:,} results in {time.perf_counter() - t:.1f} s")
    paths.warehouse.unlink(missing_ok=True)
    ctas = _ctas_seconds(paths.lake, root / "ctas.duckdb")
    (root / "ctas.duckdb").unlink(missing_ok=True)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(paths.home)], check=True, capture_output=True, text=True
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    con = duckdb.connect(str(paths.warehouse), read_only=True)
    run_id = con.execute("SELECT max(run_id) FROM runs").fetchone()[0]  # type: ignore[index]
    con.close()
    timings = []
    for _ in range(5):
        t = time.perf_counter()
        con = duckdb.connect(str(paths.warehouse), read_only=True)
        con.execute("SELECT * FROM domain_scores WHERE run_id = $r", {"r": run_id}).fetchall()
        con.close()
        timings.append(time.perf_counter() - t)
    print(f"rows loaded: {got['rows']}")
    print(
        f"ingest {got['first']:.2f} s vs CTAS {ctas:.2f} s: ratio {got['first'] / ctas:.2f} "
        "(goal <= 1.3)"
    )
    print(f"second ingest with nothing new: {got['second']:.3f} s (goal < 1 s)")
    print(f"ingest peak memory: {got['peak_mb']:.0f} MB (goal < 1500 MB)")
    print(
        f"domain_scores for one run (open + query + close): median "
        f"{sorted(timings)[2] * 1000:.0f} ms (goal < 200 ms)"
    )
    if args.keep is None:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
