"""The dashboard's one query facade: every named query is one SQL file and one typed
function, reached through one cache keyed on (warehouse, data version, name, parameters)."""

from __future__ import annotations

import time
from importlib import resources

import polars as pl
import pytest
import streamlit as st

from dashboard import data
from engine.lake import write_part
from engine.settings import Paths
from ingest import ingest
from tests.conftest import Store
from tests.factories import T0, result_record, run_record
from warehouse import (
    drift_queries as _drift_queries,  # noqa: F401  (registers its queries)
    queries as q,
    testset_queries as _testset_queries,  # noqa: F401  (registers its queries)
)


def test_one_function_per_sql_file() -> None:
    folder = resources.files("warehouse") / "sql" / "queries"
    files = {p.name.removesuffix(".sql") for p in folder.iterdir() if p.name.endswith(".sql")}
    assert set(q.QUERIES) == files
    for name, fn in q.QUERIES.items():
        assert fn.__name__ == name and fn.__doc__


def _seed(home: Paths, run_id: str, when_days: int) -> None:
    from datetime import timedelta

    started = T0 + timedelta(days=when_days)
    write_part(home.lake, "runs", run_id, 0, [run_record(run_id, started)])
    write_part(home.lake, "results", run_id, 1, [result_record(run_id, "s1")])


def test_one_cache_keyed_on_data_version(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    # On both backends: the file, and a DuckLake catalog named by EVALHOUSE_CATALOG.
    home = store.home
    _seed(home, "A", 0)
    store.ingest()
    monkeypatch.setenv("EVALHOUSE_HOME", str(home.home))
    monkeypatch.delenv("EVALHOUSE_CATALOG", raising=False)
    if store.catalog is not None:
        monkeypatch.setenv("EVALHOUSE_CATALOG", f"postgres:{store.catalog.conninfo}")
        monkeypatch.setenv("EVALHOUSE_CATALOG_DATA", str(store.catalog.data_path))
    st.cache_data.clear()
    calls: list[str] = []

    def runs(wh: q.Warehouse) -> pl.DataFrame:
        calls.append("runs")
        return q.runs(wh)

    monkeypatch.setitem(data._QUERIES, "runs", runs)
    first = data.query(runs)
    assert list(first["run_id"]) == ["A"]
    assert list(data.query(runs)["run_id"]) == ["A"] and calls == ["runs"]  # cached
    # A parameter is part of the key; the same parameters hit the cache.
    assert data.query(q.previous_run, "A") is None
    assert data.query(q.previous_run, "A") is None
    _seed(home, "B", 7)
    store.ingest()
    time.sleep(1.1)  # the data version is re-read at most once a second
    assert list(data.query(runs)["run_id"]) == ["B", "A"] and calls == ["runs", "runs"]
    assert data.query(q.previous_run, "B") == "A"


def test_the_data_version_opens_the_file_only_after_a_commit(
    home: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    _seed(home, "A", 0)
    ingest(home)
    location = str(home.warehouse)
    reads: list[str] = []
    read = q.Warehouse.data_version

    def counted(wh: q.Warehouse) -> str:
        reads.append(location)
        return read(wh)

    monkeypatch.setattr(q.Warehouse, "data_version", counted)
    monkeypatch.setattr(data, "_FILE_VERSIONS", {})
    first = data._read_version(location)
    assert data._read_version(location) == first and len(reads) == 1  # nothing committed
    _seed(home, "B", 7)
    ingest(home)
    second = data._read_version(location)
    assert second != first and len(reads) == 2
    assert data._read_version(location) == second and len(reads) == 2


def test_only_registered_queries(home: Paths, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALHOUSE_HOME", str(home.home))

    def runs(wh: q.Warehouse) -> pl.DataFrame:  # same name, not the registered function
        return pl.DataFrame()

    with pytest.raises(ValueError, match="not a registered warehouse query"):
        data.query(runs)
