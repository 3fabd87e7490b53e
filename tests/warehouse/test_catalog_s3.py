"""A DuckLake catalog whose Parquet files live in a bucket of a real S3-compatible server
(moto's, on 127.0.0.1, checking signatures): ingest and query with exact counts, two homes
ingesting at once, maintenance deleting objects, and the failures an operator meets
(wrong keys, no endpoint: exit 3; no bucket: exit 2), with the secret key in no file, no
catalog table and no output."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.lake import write_part
from engine.settings import Paths, resolve_paths
from evalhouse.cli import main
from tests.factories import T0, result_record, run_record
from tests.pg_server import PgServer, pg_bin
from tests.s3_server import S3Server
from warehouse.catalog import Catalog, close_readers
from warehouse.maintenance import maintain
from warehouse.object_store import S3Location

ROOT = Path(__file__).resolve().parents[2]
PREFIX = "team/evalhouse"


@pytest.fixture
def bucket(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> str:
    """A new empty bucket, and the AWS environment that reaches it."""
    name = f"evalhouse-{uuid.uuid4().hex[:12]}"
    s3_server.client().create_bucket(Bucket=name)
    for key, value in s3_server.env().items():
        monkeypatch.setenv(key, value)
    for key in ("AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(key, raising=False)
    return name


@pytest.fixture
def s3_catalog(pg_server: PgServer, bucket: str) -> Iterator[Catalog]:
    catalog = Catalog(pg_server.create_database(), S3Location(bucket, PREFIX))
    yield catalog
    close_readers()


def _flags(home: Paths, catalog: Catalog) -> list[str]:
    return [
        *("--home", str(home.home), "--catalog", f"postgres:{catalog.conninfo}"),
        *("--catalog-data", str(catalog.data_path)),
    ]


def _lake(home: Paths, runs: range, samples: int = 20) -> None:
    for r in runs:
        run_id = f"run{r:03d}"
        write_part(home.lake, "runs", run_id, 0, [run_record(run_id, T0)])
        rows = [result_record(run_id, f"s{i}", accuracy=float(i)) for i in range(samples)]
        write_part(home.lake, "results", run_id, 1, rows)


def _count(home: Paths, catalog: Catalog, sql: str, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main([*_flags(home, catalog), "sql", "--format", "csv", sql]) == 0
    return capsys.readouterr().out.strip().splitlines()[-1]


def _catalog_dump(pg_server: PgServer, catalog: Catalog) -> str:
    """Every table of the catalog's PostgreSQL database, as SQL text."""
    dump = pg_bin("pg_dump")
    assert dump is not None
    done = subprocess.run(
        [dump, "-d", catalog.conninfo], capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout


def test_ingest_and_query_with_the_data_in_a_bucket(
    s3_catalog: Catalog,
    home: Paths,
    s3_server: S3Server,
    bucket: str,
    pg_server: PgServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _lake(home, range(3))
    assert main([*_flags(home, s3_catalog), "ingest"]) == 0
    assert _count(home, s3_catalog, "SELECT count(*) AS n FROM results", capsys) == "60"
    assert _count(home, s3_catalog, "SELECT count(*) AS n FROM run_summary", capsys) == "3"
    keys = s3_server.keys(bucket)
    assert keys and all(k.startswith(PREFIX + "/") for k in keys)
    assert any(k.endswith(".parquet") for k in keys)
    assert not Path("s3:").exists() and not (home.home / "s3:").exists()
    # The secret is nowhere: files of the home, the catalog's tables, what was printed.
    secret = s3_server.secret
    for path in home.home.rglob("*"):
        assert not path.is_file() or secret.encode() not in path.read_bytes(), path
    dump = _catalog_dump(pg_server, s3_catalog)
    assert f"s3://{bucket}/{PREFIX}/" in dump and secret not in dump
    assert secret not in capsys.readouterr().err
    capsys.readouterr()
    sql = "SELECT secret_string FROM duckdb_secrets()"
    assert main([*_flags(home, s3_catalog), "sql", sql]) == 2
    said = capsys.readouterr()
    assert secret not in said.out + said.err


def _cli(home: Paths, catalog: Catalog, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "evalhouse.cli", *_flags(home, catalog), *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_two_homes_ingest_into_one_bucket_at_once(
    s3_catalog: Catalog, tmp_path: Path, s3_server: S3Server, capsys: pytest.CaptureFixture[str]
) -> None:
    homes = [resolve_paths(tmp_path / f"home{i}") for i in range(2)]
    _lake(homes[0], range(0, 6))
    _lake(homes[1], range(3, 9))  # runs 3..5 are in both lakes: loaded once
    children = [_cli(h, s3_catalog, "ingest") for h in homes]
    for child in children:
        out, err = child.communicate(timeout=240)
        assert child.returncode == 0, err
        assert s3_server.secret not in out + err
    assert _count(homes[0], s3_catalog, "SELECT count(*) FROM results", capsys) == "180"
    sql = "SELECT count(DISTINCT run_id) FROM results"
    assert _count(homes[1], s3_catalog, sql, capsys) == "9"


def test_maintenance_deletes_merged_and_orphaned_objects(
    s3_catalog: Catalog, home: Paths, s3_server: S3Server, bucket: str
) -> None:
    from ingest import ingest

    for r in range(6):
        _lake(home, range(r, r + 1))
        ingest(home, catalog=s3_catalog)
    client = s3_server.client()
    first = next(k for k in s3_server.keys(bucket) if k.endswith(".parquet"))
    orphan = first.rsplit("/", 1)[0] + "/ducklake-killed-ingester.parquet"
    client.copy_object(Bucket=bucket, Key=orphan, CopySource={"Bucket": bucket, "Key": first})
    before = s3_server.keys(bucket)
    report = maintain(s3_catalog, keep_s=0, grace_s=0)
    after = s3_server.keys(bucket)
    assert report.after.rows == report.before.rows and report.after.rows["results"] == 120
    assert report.before.files == len([k for k in before if k.endswith(".parquet")])
    assert orphan in before and orphan not in after
    assert len(after) < len(before) and report.after.files == len(after)


def test_wrong_keys_are_one_masked_line_and_exit_3(
    s3_catalog: Catalog,
    home: Paths,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    wrong = "wRoNgSeCrEt" + uuid.uuid4().hex
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", wrong)
    _lake(home, range(1))
    assert main([*_flags(home, s3_catalog), "ingest"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert "refused" in err and wrong not in err


def test_an_endpoint_that_does_not_answer_is_exit_3(
    s3_catalog: Catalog,
    home: Paths,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with __import__("socket").socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, never listening: the connection is refused
        monkeypatch.setenv("EVALHOUSE_S3_ENDPOINT", f"http://127.0.0.1:{port}")
        _lake(home, range(1))
        assert main([*_flags(home, s3_catalog), "ingest"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no answer from 127.0.0.1" in err, err
    assert os.environ["AWS_SECRET_ACCESS_KEY"] not in err


def test_a_bucket_that_does_not_exist_is_exit_2(
    pg_server: PgServer, bucket: str, home: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    catalog = Catalog(pg_server.create_database(), S3Location("no-such-bucket-here", "x"))
    _lake(home, range(1))
    assert main([*_flags(home, catalog), "ingest"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'no-such-bucket-here' does not exist" in err, err


@pytest.mark.parametrize(
    ("data", "said"),
    [
        ("s3://Bad_Bucket/x", "not a bucket name"),
        ("s3://key:secret@bucket/x", "write s3://BUCKET/PREFIX only"),
        ("s3://bucket/a/../b", "relative key parts"),
    ],
)
def test_a_malformed_s3_path_is_one_line_naming_the_flag(
    data: str, said: str, home: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--home", str(home.home), "--catalog", "postgres:host=x dbname=y"]
    assert main([*args, "--catalog-data", data, "ingest"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and said in err and "--catalog-data" in err, err
    assert "secret" not in err


def test_a_profile_migrate_and_in_process_readers_over_s3(
    s3_catalog: Catalog,
    home: Paths,
    s3_server: S3Server,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from ingest import ingest
    from warehouse.queries import Warehouse

    credentials = tmp_path / "aws-credentials"
    credentials.write_text(
        f"[team]\naws_access_key_id = {s3_server.key_id}\n"
        f"aws_secret_access_key = {s3_server.secret}\n"
    )
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(credentials))
    monkeypatch.setenv("AWS_PROFILE", "team")
    _lake(home, range(4))
    ingest(home)  # the file warehouse, then copied into the catalog
    target = ["migrate", "--to", f"postgres:{s3_catalog.conninfo}"]
    data = ["--catalog-data", str(s3_catalog.data_path)]
    assert main(["--home", str(home.home), *data, *target]) == 0
    assert "80 results" in capsys.readouterr().out
    # The dashboard's reads: the in-process sandboxed reader (file access off but the bucket).
    frame = Warehouse(home.warehouse, catalog=s3_catalog).sql("SELECT count(*) AS n FROM results")
    assert frame.frame["n"].to_list() == [80]


def test_maintain_waits_for_the_commit_lock_and_names_its_holder(
    s3_catalog: Catalog, home: Paths, pg_server: PgServer
) -> None:
    from ingest import ingest
    from warehouse.commit_lock import COMMIT_LOCK_KEY

    _lake(home, range(2))
    ingest(home, catalog=s3_catalog)
    psql = pg_bin("psql")
    assert psql is not None
    conninfo = f"{s3_catalog.conninfo} application_name=nightly-backfill"
    # The holder keeps the lock until maintenance has named it (the two censuses before the
    # lock take seconds on a loaded machine, so a lock held for a fixed time could be gone
    # by then), and is then let go the way the message says: pg_terminate_backend.
    holder = subprocess.Popen(
        [psql, "-X", "-q", "-d", conninfo, "-c",
         f"SELECT pg_advisory_lock({COMMIT_LOCK_KEY}), pg_sleep(600)"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    backfill = "FROM pg_stat_activity a WHERE a.application_name = 'nightly-backfill'"
    locks = "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted"
    holding = f"SELECT count(*) {backfill} AND a.pid IN ({locks})"
    heard: list[str] = []

    def told(message: str) -> None:
        heard.append(message)
        pg_server.psql(f"SELECT pg_terminate_backend(a.pid) {backfill}")

    try:
        deadline = time.monotonic() + 30
        while pg_server.psql(holding) != "1":  # the holder has the lock
            assert holder.poll() is None and time.monotonic() < deadline, "no lock taken"
            time.sleep(0.02)
        report = maintain(s3_catalog, keep_s=3600, grace_s=3600, wait_s=60, on_message=told)
    finally:
        if holder.poll() is None:
            pg_server.psql(f"SELECT pg_terminate_backend(a.pid) {backfill}")
        holder.wait(timeout=30)
    assert report.after.rows == report.before.rows
    assert len(heard) == 1 and "nightly-backfill (not evalhouse)" in heard[0], heard
    assert "pg_terminate_backend" in heard[0]


KILLED_INGEST = """
import sys
import ingest.run
from engine.settings import resolve_paths
from warehouse.catalog import catalog_from_env

def report(message):
    print(message, flush=True)
    if sys.argv[3] == "pause":
        # The kill lands here, after a commit and before the next batch: the test answers
        # every report it does not kill on, so no clock decides where the kill falls.
        sys.stdin.readline()

ingest.run.BATCH_FILES = int(sys.argv[2])
ingest.run.ingest(resolve_paths(sys.argv[1]), catalog=catalog_from_env(), on_message=report)
"""


def _ingest_and_kill(home: Paths, catalog: Catalog, after: int, when: str) -> bool:
    """An ingest process into ``catalog``, SIGKILLed at its ``after``-th batch report: in the
    pause after that commit (``when="pause"``) or while the next batch writes its objects
    (``"writing"``). Returns whether it was killed before it finished."""
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "EVALHOUSE_CATALOG": f"postgres:{catalog.conninfo}",
        "EVALHOUSE_CATALOG_DATA": str(catalog.data_path),
    }
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED_INGEST, str(home.home), "12", when],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    seen, killed = 0, False
    for line in proc.stdout:
        if line.startswith("ingested "):
            seen += 1
            if seen == after:
                if when == "writing":
                    time.sleep(0.3)  # inside the next batch's upload
                os.kill(proc.pid, signal.SIGKILL)
                killed = True
                break
        if when == "pause":
            proc.stdin.write("\n")  # go on to the next batch
            proc.stdin.flush()
    proc.wait(timeout=120)
    proc.stdin.close()
    return killed


def _rows(catalog: Catalog, home: Paths, table: str) -> dict[tuple[str, int], int]:
    from warehouse.queries import Warehouse

    sql = f"SELECT run_id, iteration, count(*) AS n FROM {table} GROUP BY ALL"
    frame = Warehouse(home.warehouse, catalog=catalog).sql(sql).frame
    close_readers()
    return {(str(r), int(i)): int(n) for r, i, n in frame.iter_rows()}


@pytest.mark.slow
def test_kill_9_mid_ingest_into_the_bucket_then_resume(
    s3_catalog: Catalog, home: Paths, s3_server: S3Server, bucket: str
) -> None:
    from ingest import ingest
    from tests.bench.lake_gen import generate
    from tests.ingest.test_ingest_kill import _lake_rows

    # 4 runs x 1 iteration, 12 results and 12 claims parts each: batches of about 12 parts.
    generate(home.lake, results=2_400, runs=4, part_rows=50)
    lake = _lake_rows(home)
    kills = [_ingest_and_kill(home, s3_catalog, 2, "pause")]
    kills.append(_ingest_and_kill(home, s3_catalog, 1, "writing"))
    assert all(kills), "an ingest finished before it was killed"
    # What a reader sees after each kill is whole: every (run, iteration) has all its rows,
    # in results and claims at once.
    results, claims = _rows(s3_catalog, home, "results"), _rows(s3_catalog, home, "claims")
    assert results
    for key, n in results.items():
        assert n == lake[("results", *key)] and claims.get(key, 0) == lake[("claims", *key)]
    # The next ingest completes exactly what the killed ones left, nothing twice.
    ingest(home, catalog=s3_catalog)
    close_readers()
    assert _rows(s3_catalog, home, "results") == {
        (r, i): n for (t, r, i), n in lake.items() if t == "results"
    }
    assert _rows(s3_catalog, home, "claims") == {
        (r, i): n for (t, r, i), n in lake.items() if t == "claims"
    }
    # Objects the killed uploads left behind belong to no snapshot: maintenance deletes
    # them and keeps every row.
    report = maintain(s3_catalog, keep_s=0, grace_s=0)
    assert report.after.rows["results"] == 2_400
    assert report.after.files == len([k for k in s3_server.keys(bucket) if k.endswith(".parquet")])
