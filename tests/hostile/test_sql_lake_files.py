"""Analyst SQL on a DuckLake catalog never tells where the data files are: DuckLake's
``filename`` virtual column is refused however it is spelled, and no plan (``EXPLAIN
ANALYZE``) or other text a query returns names the data folder.

Real PostgreSQL catalog, real DuckDB, enough rows that DuckLake writes Parquet files
rather than inlining them."""

from __future__ import annotations

import polars as pl
import pytest

from engine.lake import write_part
from engine.settings import Paths
from tests.factories import T0, result_record, run_record
from tests.hostile.conftest import assert_refused, cli
from tests.hostile.test_catalog_lifecycle import _catalog_args
from warehouse.catalog import Catalog
from warehouse.db import QueryError, mask_paths
from warehouse.queries import Warehouse

FILENAME_QUERIES = [
    "SELECT DISTINCT filename FROM results",
    'SELECT "FileName" FROM main.results LIMIT 1',
    "SELECT r.filename FROM results r LIMIT 1",
    "SELECT * FROM (SELECT filename AS f FROM results) LIMIT 1",
    "SELECT count(*) FROM results WHERE filename LIKE '%parquet'",
    "SELECT 1 FROM results GROUP BY filename",
]


@pytest.fixture
def lake_files(catalog: Catalog, home: Paths) -> Warehouse:
    write_part(home.lake, "runs", "r1", 0, [run_record("r1", T0)])
    rows = [result_record("r1", f"s{i}") for i in range(600)]  # past DuckLake's inlining
    write_part(home.lake, "results", "r1", 1, rows)
    assert cli_ingest(home, catalog) == 0
    assert any(catalog.data_path.rglob("*.parquet"))  # the rows are in files, not inlined
    return Warehouse(home.warehouse, catalog=catalog)


def cli_ingest(home: Paths, catalog: Catalog) -> int:
    from evalhouse.cli import main

    return main([*_catalog_args(home, catalog), "ingest"])


@pytest.mark.parametrize("sql", FILENAME_QUERIES)
def test_the_filename_column_is_refused(
    sql: str,
    lake_files: Warehouse,
    catalog: Catalog,
    home: Paths,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(QueryError, match="filename column is not available"):
        lake_files.analyst_sql(sql)
    outcome = cli(capsys, *_catalog_args(home, catalog), "sql", sql)
    line = assert_refused(outcome, mentions="filename column is not available here")
    assert str(catalog.data_path) not in line


@pytest.mark.parametrize(
    "sql",
    [
        "EXPLAIN ANALYZE SELECT * FROM results",
        "EXPLAIN ANALYZE SELECT run_id, count(*) FROM results WHERE sample_id > 's5' GROUP BY 1",
        "EXPLAIN SELECT * FROM results WHERE run_id = 'r1'",
    ],
)
def test_no_plan_names_the_data_folder(sql: str, lake_files: Warehouse, catalog: Catalog) -> None:
    frame = lake_files.analyst_sql(sql).frame
    text = " ".join(str(v) for row in frame.rows() for v in row)
    assert frame.height >= 1 and "results" in text.lower()
    assert str(catalog.data_path) not in text and str(catalog.data_path.resolve()) not in text


def test_an_ordinary_query_still_answers(lake_files: Warehouse) -> None:
    frame = lake_files.analyst_sql("SELECT count(*) AS n, min(sample_id) AS s FROM results").frame
    assert frame.rows() == [(600, "s0")]


def test_any_text_naming_the_folder_is_masked() -> None:
    frame = pl.DataFrame({"plan": ["scan /data/lake/main/x.parquet", "none"], "n": [1, 2]})
    masked = mask_paths(frame, ["/data/lake"])
    assert masked["plan"].to_list() == ["scan <data>/main/x.parquet", "none"]
    assert masked["n"].to_list() == [1, 2]
