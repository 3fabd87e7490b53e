"""Concurrent ingest benchmark: 1, 2 and 4 ingest processes at once, each
loading its own lake (disjoint runs), into one DuckLake catalog on PostgreSQL vs into one
warehouse.duckdb file. Prints, from one run, rows per second of the whole group (first
start to last end) and the ratios DuckLake / file and k ingesters / 1 ingester.

The file warehouse has one writer at a time (the others wait for its lock); the catalog
lets writers read and write Parquet in parallel and serialises only the commits.

    python -m tests.bench.catalog_ingest [--results N]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from engine.lake import list_parts
from tests.bench.lake_gen import generate
from tests.pg_server import missing_reason, server

CHILD = """
import sys, time
from dataclasses import dataclass
from pathlib import Path
from engine.settings import Paths
from ingest import ingest
from warehouse.catalog import catalog_from_env

@dataclass(frozen=True)
class SharedWarehouse(Paths):
    shared: Path = Path()

    @property
    def warehouse(self) -> Path:
        return self.shared

paths = SharedWarehouse(Path(sys.argv[1]), Path(sys.argv[2]))
report = ingest(paths, catalog=catalog_from_env(), wait_s=600)
print(sum(report.rows.values()))
"""


def _split(source: Path, root: Path, k: int) -> list[Path]:
    """``k`` homes whose lakes hold disjoint runs of ``source`` (hard links, no copies)."""
    homes = [root / f"k{k}-home{i}" for i in range(k)]
    run_ids = sorted({p.run_id for p in list_parts(source)})
    for part in list_parts(source):
        home = homes[run_ids.index(part.run_id) % k]
        target = home / "lake" / part.path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.hardlink_to(part.path)
    return homes


def _group(homes: list[Path], shared: Path, env: dict[str, str]) -> tuple[float, int]:
    """Seconds from the first start to the last end, and rows loaded."""
    started = time.perf_counter()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(home), str(shared)],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for home in homes
    ]
    rows = 0
    for proc in procs:
        out, _ = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"an ingester failed (exit {proc.returncode})")
        rows += int(out.strip().splitlines()[-1])
    return time.perf_counter() - started, rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--results", type=int, default=40_000)
    args = parser.parse_args()
    reason = missing_reason()
    if reason:
        print(f"skipped: {reason}")
        return
    import os

    root = Path(tempfile.mkdtemp(prefix="evalhouse-bench-catalog-"))
    source = root / "source-lake"
    generate(source, args.results, runs=8, part_rows=1_000)
    print(f"lake: {args.results:,} results (~5 claims each) in {len(list_parts(source))} parts")
    base = {k: v for k, v in os.environ.items() if not k.startswith("EVALHOUSE_CATALOG")}
    figures: dict[tuple[str, int], float] = {}
    with server() as pg:
        for k in (1, 2, 4):
            homes = _split(source, root, k)
            seconds, rows = _group(homes, root / f"k{k}.duckdb", base)
            figures[("file", k)] = rows / seconds
            conninfo = pg.create_database("evalhouse_bench")
            env = {**base, "EVALHOUSE_CATALOG": f"postgres:{conninfo}"}
            env["EVALHOUSE_CATALOG_DATA"] = str(root / f"k{k}-catalog-data")
            seconds_lake, rows_lake = _group(homes, root / "unused.duckdb", env)
            figures[("ducklake", k)] = rows_lake / seconds_lake
            print(
                f"{k} ingester(s): file {rows / seconds:,.0f} rows/s ({seconds:.1f} s), "
                f"DuckLake {rows_lake / seconds_lake:,.0f} rows/s ({seconds_lake:.1f} s); "
                f"DuckLake / file = {figures[('ducklake', k)] / figures[('file', k)]:.2f}"
            )
    for backend in ("file", "ducklake"):
        one = figures[(backend, 1)]
        print(
            f"{backend}: 2 ingesters / 1 = {figures[(backend, 2)] / one:.2f}, "
            f"4 ingesters / 1 = {figures[(backend, 4)] / one:.2f}"
        )
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
