"""``maintain --grace`` has a floor: a grace too short to cover an ingest in flight (its
Parquet files written, its commit not yet) is refused in one line unless forced, and a
file written a moment ago (what an uncommitted ingest leaves) survives the default and the
floor alike.

The red team's deletion (``maintain --grace 0s`` beside an ingest, then "Cannot open
file") was not reproduced here; the floor is defensive: it refuses the grace that made it
possible rather than racing DuckLake's own cleanup."""

from __future__ import annotations

import pytest

from engine.settings import Paths
from tests.hostile.conftest import assert_refused, cli
from tests.warehouse.test_maintenance import _args, _orphan, _small_ingests
from warehouse import MIN_FILE_GRACE_S
from warehouse.catalog import Catalog
from warehouse.queries import Warehouse


@pytest.mark.parametrize("grace", ["0s", "1s", "9m"])
def test_a_grace_under_the_floor_is_refused_and_deletes_nothing(
    grace: str, catalog: Catalog, home: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    _small_ingests(home, catalog, 2)
    in_flight = _orphan(catalog)  # written now, committed by nobody yet
    files = sorted(catalog.data_path.rglob("*.parquet"))
    outcome = cli(capsys, *_args(home, catalog), "maintain", "--keep", "0s", "--grace", grace)
    line = assert_refused(outcome, mentions=f"under {MIN_FILE_GRACE_S:g} s it may delete files")
    assert "--force-grace" in line and str(catalog.data_path) not in line
    assert sorted(catalog.data_path.rglob("*.parquet")) == files and in_flight.exists()


def test_the_floor_keeps_a_fresh_file_and_forcing_removes_it(
    catalog: Catalog, home: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    _small_ingests(home, catalog, 2)
    in_flight = _orphan(catalog)
    at_floor = f"{MIN_FILE_GRACE_S:g}s"
    outcome = cli(capsys, *_args(home, catalog), "maintain", "--keep", "0s", "--grace", at_floor)
    assert outcome.code == 0, outcome.err
    assert in_flight.exists()  # younger than the grace: an ingest may still commit it
    assert Warehouse(home.warehouse, catalog=catalog).sql("SELECT * FROM runs").frame.height == 2
    forced = ("maintain", "--keep", "0s", "--grace", "0s", "--force-grace")
    assert cli(capsys, *_args(home, catalog), *forced).code == 0
    assert not in_flight.exists()
    summary = Warehouse(home.warehouse, catalog=catalog).sql("SELECT * FROM run_summary")
    assert summary.frame.height == 2
