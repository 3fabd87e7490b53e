"""Ingest benchmark: 1,000,000 results with ~5 claims each.

Prints, from one run: ingest time as a ratio to DuckDB's own CTAS over the same files
(goal <= 1.3), a second ingest with nothing new (goal < 1 s), the ingest process's peak
memory (goal < 1.5 GB) and one run's domain_scores query time (goal < 200 ms).

With ``--catalog-data s3://BUCKET/PREFIX`` it instead ingests the same lake into a DuckLake
catalog on PostgreSQL twice, the data once in the bucket and once in a local folder, and
prints the ratio of the two times. The bucket is on the S3 server of the AWS environment
(``EVALHOUSE_S3_ENDPOINT``, keys in ``AWS_*``) or, when no endpoint is set, on a local
S3-compatible server started for the run (moto's, on 127.0.0.1), bucket created.

    python -m tests.bench.ingest [--results N] [--catalog-data s3://BUCKET/PREFIX]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
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


CATALOG_CHILD = """
import json, sys, time
from engine.settings import resolve_paths
from ingest import ingest
from warehouse.catalog import catalog_from_env
paths = resolve_paths(sys.argv[1])
t = time.perf_counter(); report = ingest(paths, catalog=catalog_from_env())
print(json.dumps({"seconds": time.perf_counter() - t, "rows": report.rows}))
"""


def _catalog_ingest(home: Path, conninfo: str, data: str) -> tuple[float, int]:
    """Seconds and result rows of one ingest of ``home``'s lake into a new catalog."""
    env = {**os.environ, "EVALHOUSE_CATALOG": f"postgres:{conninfo}"}
    env["EVALHOUSE_CATALOG_DATA"] = data
    out = subprocess.run(
        [sys.executable, "-c", CATALOG_CHILD, str(home)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    return float(got["seconds"]), int(got["rows"]["results"])


def _s3_versus_folder(root: Path, home: Path, data: str) -> None:
    """The lake into a catalog with its data in the bucket, then in a local folder."""
    from warehouse.object_store import S3Location, parse_s3

    location: S3Location = parse_s3(data)
    with contextlib.ExitStack() as stack:
        if not os.environ.get("EVALHOUSE_S3_ENDPOINT"):
            from tests.s3_server import missing_reason, s3_session

            reason = missing_reason()
            if reason:
                raise SystemExit(f"skipped: {reason}")
            s3 = stack.enter_context(s3_session())
            os.environ.update(s3.env())
            s3.client().create_bucket(Bucket=location.bucket)
            print(f"local S3 server at {s3.endpoint}, bucket {location.bucket} created")
        from tests.pg_server import server

        pg = stack.enter_context(server())
        s3_s, s3_rows = _catalog_ingest(home, pg.create_database("evalhouse_bench"), data)
        folder = str(root / "catalog-data")
        local_s, local_rows = _catalog_ingest(home, pg.create_database("evalhouse_bench"), folder)
    print(f"DuckLake, data in {data}: {s3_rows:,} results in {s3_s:.1f} s")
    print(f"DuckLake, data in a local folder: {local_rows:,} results in {local_s:.1f} s")
    print(f"bucket / local folder = {s3_s / local_s:.2f} (same catalog server, same lake)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--results", type=int, default=1_000_000)
    parser.add_argument("--keep", type=Path, help="keep the generated home here")
    parser.add_argument(
        "--catalog-data",
        metavar="s3://BUCKET/PREFIX",
        help="compare a DuckLake catalog with its data in this bucket to a local folder",
    )
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="evalhouse-bench-"))
    paths = resolve_paths(root / "home")
    if not paths.lake.exists():
        t = time.perf_counter()
        generate(paths.lake, args.results)
        print(f"generated {args.results:,} results in {time.perf_counter() - t:.1f} s")
    if args.catalog_data:
        _s3_versus_folder(root, paths.home, args.catalog_data)
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
        return
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
