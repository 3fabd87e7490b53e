"""A team catalog in bad weather: a stuck ingester holding the commit lock, a data path
on object storage, maintenance functions typed into the analysts' SQL box.

Real PostgreSQL (``tests/pg_server.py``), real DuckDB; the stuck ingester is a real
evalhouse process that took the lock and stopped."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.lake import write_part
from engine.settings import Paths
from evalhouse.cli import main
from tests.factories import T0, result_record, run_record
from warehouse.catalog import Catalog

ROOT = Path(__file__).resolve().parents[2]

_HOLD = """
import sys, time
from pathlib import Path
from warehouse.catalog import Catalog, write_connection
catalog = Catalog(sys.argv[1], Path(sys.argv[2]))
with write_connection(catalog) as (con, guard), guard.lock():
    print("held", flush=True)
    time.sleep(120)
"""


def _catalog_args(home: Paths, catalog: Catalog) -> list[str]:
    return [
        "--home",
        str(home.home),
        "--catalog",
        f"postgres:{catalog.conninfo}",
        "--catalog-data",
        str(catalog.data_path),
    ]


def _one_run(home: Paths) -> None:
    write_part(home.lake, "runs", "r1", 0, [run_record("r1", T0)])
    write_part(home.lake, "results", "r1", 1, [result_record("r1", f"s{i}") for i in range(5)])


def test_a_stuck_ingester_is_named_and_the_others_give_up_in_time(
    catalog: Catalog, home: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    _one_run(home)
    assert main([*_catalog_args(home, catalog), "ingest"]) == 0
    capsys.readouterr()
    write_part(home.lake, "results", "r1", 2, [result_record("r1", "s9", iteration=2)])
    stuck = subprocess.Popen(
        [sys.executable, "-c", _HOLD, catalog.conninfo, str(catalog.data_path)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert stuck.stdout is not None and stuck.stdout.readline().strip() == "held"
        started = time.monotonic()
        code = main([*_catalog_args(home, catalog), "ingest", "--wait", "2"])
        waited = time.monotonic() - started
        err = capsys.readouterr().err
        assert code == 3 and 2 <= waited < 15  # the warehouse is unavailable, not misused
        assert err.count("\n") == 1 and "Traceback" not in err
        assert "commit lock stayed taken for 2 s" in err
        assert f"pid={stuck.pid}" in err and "host=" in err and " since " in err
        assert "pg_terminate_backend(" in err and "safe in the lake" in err
    finally:
        stuck.kill()
        stuck.wait()
    # The holder's death frees the lock (the server ends its transaction): ingest goes on.
    assert main([*_catalog_args(home, catalog), "ingest", "--wait", "20"]) == 0
    assert "ingested 1 parts" in capsys.readouterr().out


@pytest.mark.parametrize("data", ["gs://b/x", "https://key:secret@host/x", "file:///srv/x"])
def test_an_object_storage_data_path_is_refused_not_a_local_folder(
    data: str,
    home: Paths,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    code = main(
        [
            *("--home", str(home.home), "--catalog", "postgres:host=127.0.0.1 dbname=x"),
            *("--catalog-data", data, "ingest"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "object storage" in err and "not supported" in err and "secret" not in err
    assert not any(p.name.endswith(":") for p in tmp_path.rglob("*"))  # no folder "s3:"


def test_an_s3_data_path_without_credentials_is_one_line_not_a_local_folder(
    home: Paths,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    code = main(
        [
            *("--home", str(home.home), "--catalog", "postgres:host=127.0.0.1 dbname=x"),
            *("--catalog-data", "s3://team-bucket/evalhouse", "ingest"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "no credentials" in err and "AWS_ACCESS_KEY_ID" in err
    assert not any(p.name.endswith(":") for p in tmp_path.rglob("*"))  # no folder "s3:"
