"""Shared fixtures: a fresh evalhouse home in a temporary folder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from engine.settings import Paths, resolve_paths
from ingest import IngestReport, ingest
from tests.pg_server import PgServer, missing_reason as pg_missing_reason, server as pg_session
from tests.s3_server import S3Server, missing_reason as s3_missing_reason, s3_session
from warehouse.catalog import Catalog, close_readers
from warehouse.queries import Warehouse


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``slow`` the tests ``tests/slow.txt`` lists as measured slow; under xdist, also
    put them first, longest first."""
    from tests.slow_tests import listed, listed_seconds

    slow = listed()
    for item in items:
        if item.nodeid in slow:
            item.add_marker(pytest.mark.slow)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # A 15 s test that starts last keeps one core busy alone at the end of the run.
        # The files with the most slow seconds go first and, with ``--dist worksteal``, an
        # idle worker takes the quick tests at the end of a busy worker's queue, so both
        # finish together. Whole files move (a stable sort), so module fixtures are still
        # built once; every worker sorts the same collection the same way, as xdist needs.
        per_file: dict[str, float] = {}
        for node, seconds in listed_seconds().items():
            path = node.split("::", 1)[0]
            per_file[path] = per_file.get(path, 0.0) + seconds
        items.sort(key=lambda item: -per_file.get(item.nodeid.split("::", 1)[0], 0.0))


def pytest_configure(config: pytest.Config) -> None:
    """Every new ``AppTest`` scans the metadata of every installed distribution for
    Streamlit components (0.1-0.2 s each time: a quarter of a short page test; a real
    server scans once when it starts). The installed packages do not change while the
    tests run, so each test process scans once."""
    import functools

    try:
        from streamlit.components.v2 import manifest_scanner
    except ImportError:  # another Streamlit: nothing to spare
        return
    scan = manifest_scanner.scan_component_manifests
    manifest_scanner.scan_component_manifests = functools.cache(scan)


@pytest.fixture
def home(tmp_path: Path) -> Paths:
    """Paths of an empty evalhouse home."""
    return resolve_paths(tmp_path / "home")


_EXPORTED = ("EVALHOUSE_CATALOG", "EVALHOUSE_CATALOG_DATA", "EVALHOUSE_HOME")
"""What the CLI exports into its own environment for its children (``evalhouse.home``): a
CLI test run in-process leaves them set in the test process."""


@pytest.fixture(autouse=True, scope="session")
def _no_catalog_from_the_developer() -> None:
    """No developer's own catalog reaches the tests, not even the module fixtures that are
    built before any test's own fixtures run."""
    for name in ("EVALHOUSE_CATALOG", "EVALHOUSE_CATALOG_DATA"):
        os.environ.pop(name, None)


@pytest.fixture(autouse=True)
def _no_catalog_from_outside(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every test starts without EVALHOUSE_CATALOG*, and what an in-process CLI call
    exported is gone when the test ends: otherwise the next module's fixtures (built before
    this fixture runs for its first test) would run against another test's catalog."""
    before = {name: os.environ.get(name) for name in _EXPORTED}
    monkeypatch.delenv("EVALHOUSE_CATALOG", raising=False)
    monkeypatch.delenv("EVALHOUSE_CATALOG_DATA", raising=False)
    yield
    for name, value in before.items():
        if name in ("EVALHOUSE_CATALOG", "EVALHOUSE_CATALOG_DATA") or value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(autouse=True)
def _no_step_summary_from_outside(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests run in GitHub Actions see its GITHUB_STEP_SUMMARY: without this, every
    ``check`` a test runs would append to the job's real summary."""
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """A PostgreSQL server for DuckLake catalogs (``EVALHOUSE_TEST_PG``, else a throwaway
    cluster); the test is skipped, saying why, when this machine has no PostgreSQL."""
    reason = pg_missing_reason()
    if reason is not None:
        pytest.skip(reason)
    with pg_session() as server:
        yield server


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """An S3-compatible server on 127.0.0.1 (moto's, signatures checked); the test is
    skipped, saying why, when moto[server] is not installed."""
    reason = s3_missing_reason()
    if reason is not None:
        pytest.skip(reason)
    with s3_session() as server:
        yield server


@pytest.fixture
def catalog(pg_server: PgServer, tmp_path: Path) -> Iterator[Catalog]:
    """An empty DuckLake catalog: a new database on the test server, data under tmp."""
    conninfo = pg_server.create_database()
    yield Catalog(conninfo, tmp_path / "catalog-data")
    close_readers()
    if pg_server.owned is None:  # a server we were given keeps no test databases
        name = conninfo.rsplit("dbname=", 1)[1]
        pg_server.psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@dataclass
class Store:
    """A home and the warehouse it ingests into: the file, or a DuckLake catalog."""

    home: Paths
    catalog: Catalog | None

    def ingest(self, **options: Any) -> IngestReport:
        """``ingest`` of the home's lake into this warehouse."""
        return ingest(self.home, catalog=self.catalog, **options)

    @property
    def warehouse(self) -> Warehouse:
        """The read facade over this warehouse."""
        return Warehouse(self.home.warehouse, catalog=self.catalog)


@pytest.fixture(params=["file", "ducklake"])
def store(request: pytest.FixtureRequest, home: Paths) -> Store:
    """The same test on both backends: warehouse.duckdb, and a DuckLake catalog."""
    if request.param == "file":
        return Store(home, None)
    return Store(home, request.getfixturevalue("catalog"))
