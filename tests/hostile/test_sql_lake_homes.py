"""Hostile SQL, lake parts, warehouse files and homes: refused in one line, or skipped and
counted on standard error; the sandbox never tells where the warehouse lives."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine.lake import write_part
from engine.settings import Paths
from tests.factories import result_record
from tests.hostile.conftest import assert_refused, cli, fingerprint

SQL: dict[str, str] = {
    "empty": "",
    "spaces": "   \n\t ",
    "comment-only": "-- nothing here",
    "block-comment": "/* nothing */",
    "semicolon": ";",
    "semicolons": " ; ; ;",
    "pragma-database-list": "PRAGMA database_list",
    "pragma-view": "SELECT * FROM pragma_database_list",
    "databases": "SELECT path FROM duckdb_databases()",
    "databases-quoted-case": 'SELECT * FROM "DuckDB_Databases"()',
    "databases-schema": "SELECT * FROM system.main.duckdb_databases()",
    "databases-obfuscated": "SELECT reverse(path) FROM duckdb_databases()",
    "databases-in-subquery": "SELECT (SELECT max(path) FROM duckdb_databases()) AS p",
    "databases-in-cte": "WITH d AS (FROM duckdb_databases()) SELECT * FROM d",
    "databases-explain-analyze": "EXPLAIN ANALYZE SELECT * FROM duckdb_databases()",
    "databases-summarize": "SUMMARIZE SELECT * FROM duckdb_databases()",
    "settings": "SELECT * FROM duckdb_settings()",
    "pg-settings": "SELECT * FROM pg_settings",
    "current-setting": "SELECT current_setting('temp_directory')",
    "extensions": "SELECT * FROM duckdb_extensions()",
    "secrets": "SELECT * FROM duckdb_secrets()",
    "temporary-files": "SELECT * FROM duckdb_temporary_files()",
    "query-from-text": "SELECT * FROM query('SELECT * FROM duckdb_' || 'databases()')",
    "query-table": "SELECT * FROM query_table('results')",
    "second-statement": "SELECT 1; PRAGMA database_list",
    "set": "SET threads = 1",
    "set-external": "SET enable_external_access = true",
    "call": "CALL pragma_database_list()",
    "prepare": "PREPARE p AS SELECT 1",
    "temp-table": "CREATE TEMP TABLE t AS SELECT 1",
    "temp-macro": "CREATE TEMP MACRO m() AS TABLE SELECT * FROM duckdb_databases()",
    "insert": "INSERT INTO results (run_id) VALUES ('x')",
    "delete": "DELETE FROM results",
    "drop": "DROP TABLE results",
    "copy-out": "COPY results TO '/tmp/evalhouse-leak.csv'",
    "export-database": "EXPORT DATABASE '/tmp/evalhouse-leak'",
    "attach": "ATTACH '/tmp/other.duckdb' AS o",
    "detach": "DETACH warehouse",
    "use": "USE system",
    "install": "INSTALL httpfs",
    "load": "LOAD httpfs",
    "checkpoint": "CHECKPOINT",
    "vacuum": "VACUUM",
    "read-csv": "SELECT * FROM read_csv('/etc/passwd')",
    "read-parquet-glob": "SELECT * FROM read_parquet('/**/*.parquet')",
    "glob": "SELECT * FROM glob('/*')",
    "syntax-error": "SELEC 1 FROM",
    "unknown-table": "SELECT * FROM nope",
}


@pytest.mark.parametrize("case", sorted(SQL), ids=str)
def test_hostile_sql_is_refused_in_one_line_without_the_path(
    case: str, seeded: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    before = fingerprint(seeded)
    outcome = cli(capsys, "sql", SQL[case], "--home", str(seeded.home))
    assert_refused(outcome, mentions="Query failed:")
    assert str(seeded.home) not in outcome.out + outcome.err
    assert fingerprint(seeded) == before
    assert not Path("/tmp/evalhouse-leak.csv").exists()


def test_plain_queries_still_work(seeded: Paths, capsys: pytest.CaptureFixture[str]) -> None:
    for query in ("SHOW TABLES", "DESCRIBE results", "EXPLAIN SELECT 1", "FROM results LIMIT 1"):
        outcome = cli(capsys, "sql", query, "--home", str(seeded.home))
        assert outcome.code == 0, (query, outcome.err)
        assert str(seeded.home) not in outcome.out


def _bad_part(kind: str) -> bytes:
    good = pa.table({"run_id": ["R"], "iteration": [1], "sample_id": ["x"]})
    if kind == "garbage":
        return os.urandom(300)
    if kind == "empty":
        return b""
    if kind == "magic-only":
        return b"PAR1PAR1"
    if kind == "wrong-types":
        table = pa.table({"run_id": [1.5], "iteration": ["one"], "sample_id": [[1, 2]]})
    else:
        table = good
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    data = sink.getvalue().to_pybytes()
    if kind == "truncated":
        return data[: len(data) // 2]
    if kind == "flipped-footer":
        return data[:-12] + bytes(8) + data[-4:]
    return data


@pytest.mark.parametrize(
    "kind",
    ["garbage", "empty", "magic-only", "wrong-types", "truncated", "flipped-footer", "fifo", "dir"],
)
def test_corrupt_lake_part_is_skipped_counted_on_stderr(
    kind: str, home: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    write_part(home.lake, "results", "R", 1, [result_record("R", "s1")])
    folder = home.lake / "results" / "run_id=R" / "iteration=1"
    bad = folder / "part-000099.parquet"
    if kind == "fifo":
        os.mkfifo(bad)  # DuckDB would wait on it forever
    elif kind == "dir":
        bad.mkdir()
    else:
        bad.write_bytes(_bad_part(kind))
    outcome = cli(capsys, "ingest", "--home", str(home.home))
    assert "Traceback" not in outcome.out + outcome.err
    assert outcome.code == 0
    assert len(outcome.out.splitlines()) == 1 and "skipped 1 corrupt part(s)" in outcome.out
    assert outcome.err_lines[0].startswith("warning: skipped 1 corrupt lake part(s)")
    assert len(outcome.err_lines) == 2 and str(bad) in outcome.err_lines[1]
    check = cli(capsys, "sql", "SELECT sample_id FROM results", "--format", "csv", "--home")
    assert check.code == 2  # --home needs a value: one line too
    rows = cli(
        capsys, "sql", "SELECT sample_id FROM results", "--format", "csv", "--home", str(home.home)
    )
    assert rows.out.splitlines() == ["sample_id", "s1"]


WAREHOUSES = {
    "garbage": lambda p: p.write_bytes(os.urandom(5000)),
    "empty-file": lambda p: p.write_bytes(b""),
    "text": lambda p: p.write_text("not a database\n"),
    "sqlite": lambda p: p.write_bytes(b"SQLite format 3\x00" + bytes(4080)),
    "folder": lambda p: p.mkdir(),
    "fifo": lambda p: os.mkfifo(p),
}


@pytest.mark.parametrize("kind", sorted(WAREHOUSES))
@pytest.mark.parametrize("command", ["sql", "ingest", "check"])
def test_broken_warehouse_file_is_refused_and_left_alone(
    kind: str, command: str, home: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    home.home.mkdir(parents=True)
    WAREHOUSES[kind](home.warehouse)
    before = fingerprint(home) if home.warehouse.is_file() else None
    argv = {
        "sql": ["sql", "SELECT 1"],
        "ingest": ["ingest", "--wait", "1"],
        "check": ["check", "R", "--min", "accuracy=70"],
    }
    outcome = cli(capsys, *argv[command], "--home", str(home.home))
    # a warehouse that cannot be opened is an outage (exit 3), not a mistake in the command
    assert_refused(outcome, mentions=str(home.warehouse), code=3)
    if before is not None:
        assert fingerprint(home) == before


@pytest.mark.parametrize("command", ["sql", "ingest", "check", "run", "export", "demo"])
def test_home_that_is_a_file_is_refused(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    home.write_text("I am a file\n")
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"id": "a", "query": "q", "response": "r"}\n')
    argv = {
        "sql": ["sql", "SELECT 1"],
        "ingest": ["ingest"],
        "check": ["check", "R"],
        "run": ["run", "--test-set", str(cases), "--name", "h"],
        "export": ["export", "R", "--format", "jsonl"],
        "demo": ["demo", "--no-dashboard"],
    }[command]
    outcome = cli(capsys, *argv, "--home", str(home))
    assert_refused(outcome, mentions="not a folder")
    assert home.read_text() == "I am a file\n"


@pytest.mark.parametrize("command", ["run", "ingest", "demo"])
def test_home_under_a_file_is_refused(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file").write_text("x")
    home = tmp_path / "file" / "home"
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"id": "a", "query": "q", "response": "r"}\n')
    argv = {
        "run": ["run", "--test-set", str(cases), "--name", "h"],
        "ingest": ["ingest"],
        "demo": ["demo", "--no-dashboard"],
    }[command]
    outcome = cli(capsys, *argv, "--home", str(home))
    assert_refused(outcome, mentions="cannot write there")


@pytest.fixture
def readonly_home(tmp_path: Path) -> Path:
    """A home folder nobody may write: a read-only tmpfs for root (root ignores modes),
    mode 0555 for anyone else."""
    home = tmp_path / "ro"
    home.mkdir()
    if os.geteuid() != 0:
        home.chmod(0o555)
        yield home
        home.chmod(0o755)
        return
    if os.system(f"mount -t tmpfs -o size=1m,ro tmpfs {home} 2>/dev/null") != 0:
        pytest.skip("cannot mount a read-only tmpfs here")
    try:
        yield home
    finally:
        os.system(f"umount {home}")


@pytest.mark.parametrize("command", ["run", "ingest", "demo"])
def test_read_only_home_is_refused_in_one_line(
    command: str, readonly_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"id": "a", "query": "q", "response": "r"}\n')
    argv = {
        "run": ["run", "--test-set", str(cases), "--name", "h", "--no-ingest"],
        "ingest": ["ingest"],
        "demo": ["demo", "--no-dashboard"],
    }[command]
    outcome = cli(capsys, *argv, "--home", str(readonly_home))
    assert_refused(outcome, mentions="cannot write there")
    assert list(readonly_home.iterdir()) == []
