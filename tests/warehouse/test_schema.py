"""The DDL is generated from the models: pinned by a golden file, checked by DESCRIBE."""

from __future__ import annotations

import os
from pathlib import Path

import duckdb

from engine.columns import columns
from engine.models import LAKE_TABLES
from engine.settings import Paths
from ingest import ingest
from warehouse.schema import ddl

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "warehouse_ddl.sql"


def test_ddl_matches_golden_file() -> None:
    # To accept an intended schema change: EVALHOUSE_UPDATE_GOLDEN=1 pytest tests/warehouse
    if os.environ.get("EVALHOUSE_UPDATE_GOLDEN"):
        GOLDEN.write_text(ddl(), encoding="utf-8")
    assert ddl() == GOLDEN.read_text(encoding="utf-8")


def test_describe_matches_models(home: Paths) -> None:
    ingest(home)  # creates the schema in an empty warehouse
    con = duckdb.connect(str(home.warehouse), read_only=True)
    try:
        for table, model in LAKE_TABLES.items():
            described = con.execute(f'DESCRIBE "{table}"').fetchall()
            got = [(name, typ, null == "YES") for name, typ, null, *_ in described]
            want = [(c.name, c.duckdb_type, c.nullable or not c.required) for c in columns(model)]
            assert got == want, table
        versions = con.execute("SELECT version, ddl_sha256 FROM schema_version").fetchall()
        assert len(versions) == 1
    finally:
        con.close()


def test_every_contract_view_exists(home: Paths) -> None:
    ingest(home)
    con = duckdb.connect(str(home.warehouse), read_only=True)
    try:
        views = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views()").fetchall()}
    finally:
        con.close()
    assert {"domain_scores", "domain_trends", "run_summary"} <= views
