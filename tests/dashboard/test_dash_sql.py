"""SQL page: results, schema browser, and refusals of every escape attempt."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from engine.settings import Paths
from tests.dashboard.conftest import AppFactory, table


def _run(at: AppTest, sql: str) -> AppTest:
    at.text_area(key="sql_text").set_value(sql)
    at.button[0].click()  # the form's submit button
    return at.run()


def test_query_results_and_schema(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home, "sql")
    schema = next(m.value for m in at.markdown if "<details>" in m.value)
    tables, views = schema.split("<p><strong>Views</strong></p>")
    assert tables.startswith("<p><strong>Tables</strong></p>")
    assert "<summary>results</summary>" in tables
    assert "<summary>domain_scores</summary>" in views
    assert "<tr><td><code>run_id</code></td><td>VARCHAR</td></tr>" in schema
    _run(at, "SELECT run_id, name FROM runs ORDER BY run_id")
    assert not at.error
    rows = table(at, "name")
    assert rows == [
        {"run_id": "r1", "name": "week 1"},
        {"run_id": "r2", "name": "week 2"},
        {"run_id": "r3", "name": "week 3"},
        {"run_id": "rc", "name": "prompt test"},
    ]
    assert any(c.value.startswith("4 rows in") for c in at.caption)
    assert len(at.get("download_button")) == 1


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM read_text('/etc/passwd')",
        "COPY results TO '/tmp/evalhouse-leak.csv'",
        "ATTACH '/tmp/other.duckdb' AS other",
        "INSTALL httpfs",
        "LOAD httpfs",
        "SET enable_external_access = true",
        "DELETE FROM results",
        "CREATE TABLE x AS SELECT 1",
        "SELECT * FROM read_parquet('https://example.com/x.parquet')",
    ],
)
def test_escape_attempts_are_refused(app: AppFactory, fixture_home: Paths, sql: str) -> None:
    at = _run(app(fixture_home, "sql"), sql)
    assert [e.value for e in at.error] == ["Query refused or failed"]
    assert not [f for f in at.dataframe if "column" not in f.value.columns]


def test_very_long_query_refused_before_running(app: AppFactory, fixture_home: Paths) -> None:
    at = _run(app(fixture_home, "sql"), "SELECT 1 " + " " * 50_000)
    assert [e.value for e in at.error] == ["Refused"]
    assert "50,009 characters" in at.code[-1].value


def test_sql_page_on_missing_warehouse(app: AppFactory, missing_home: Paths) -> None:
    at = app(missing_home, "sql")
    assert "make demo" in at.info[0].value


def test_the_schema_list_escapes_every_name() -> None:
    import polars as pl

    from dashboard.components.schema_list import schema_html

    frame = pl.DataFrame(
        {"object": ["a<b>"], "kind": ["view"], "column": ["$x$ & y"], "type": ["MAP(A, B)"]}
    )
    html = schema_html(frame)
    assert "<b>" not in html
    assert "<p><strong>Views</strong></p><details><summary>a&lt;b&gt;</summary>" in html
    assert "<code>&#36;x&#36; &amp; y</code>" in html
