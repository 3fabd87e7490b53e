"""The catalog down: every viewer sees one panel, with the password masked, and no
traceback; an unexpected error is one panel too."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.components.errors import masked
from engine.settings import Paths
from tests.dashboard.conftest import APP

PASSWORD = "pw-" + "9f8e7d6c5b"


def _texts(at: AppTest) -> str:
    parts = (
        [e.value for e in at.error] + [c.value for c in at.code] + [m.value for m in at.markdown]
    )
    return "\n".join(str(p) for p in parts)


@pytest.mark.parametrize("page", [None, "overview", "runs", "sql"])
def test_a_catalog_that_is_down_shows_no_password_and_no_traceback(
    page: str | None, tmp_path: Path, fixture_home: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALHOUSE_HOME", str(fixture_home.home))
    # Port 9 on loopback: nothing listens, the connection is refused at once.
    conninfo = f"host=127.0.0.1 port=9 dbname=evalhouse user=ev password={PASSWORD}"
    monkeypatch.setenv("EVALHOUSE_CATALOG", f"postgres:{conninfo}")
    monkeypatch.setenv("EVALHOUSE_CATALOG_DATA", str(tmp_path / "data"))
    at = AppTest.from_file(APP, default_timeout=60)
    if page is not None:
        at.switch_page(f"app_pages/{page}.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    shown = _texts(at)
    assert at.error, "the outage is said"
    assert PASSWORD not in shown and "Traceback" not in shown


def test_masked_hides_connection_passwords_nobody_registered() -> None:
    text = masked("connection failed: host=db password='se cret' x; postgresql://u:p4ss@db:5432/e")
    assert "se cret" not in text and "p4ss" not in text and "host=db" in text


def test_the_catalog_going_down_after_connecting_shows_one_masked_panel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine.lake import write_part
    from engine.settings import resolve_paths
    from ingest import ingest
    from tests.factories import result_record, run_record
    from tests.pg_server import missing_reason, start_cluster
    from warehouse.catalog import Catalog

    reason = missing_reason()
    if reason is not None:
        pytest.skip(reason)
    cluster = start_cluster()  # its own: this test stops it
    try:
        conninfo = f"{cluster.create_database()} password={PASSWORD}"
        home = resolve_paths(tmp_path / "home")
        write_part(home.lake, "runs", "r1", 0, [run_record("r1")])
        write_part(home.lake, "results", "r1", 1, [result_record("r1", "s1")])
        ingest(home, catalog=Catalog(conninfo, tmp_path / "data"))
        monkeypatch.setenv("EVALHOUSE_HOME", str(home.home))
        monkeypatch.setenv("EVALHOUSE_CATALOG", f"postgres:{conninfo}")
        monkeypatch.setenv("EVALHOUSE_CATALOG_DATA", str(tmp_path / "data"))
        at = AppTest.from_file(APP, default_timeout=60)
        at.switch_page("app_pages/runs.py")
        at.run()
        assert not at.exception and not at.error, "the catalog is up: the page works"
    finally:
        cluster.stop()
    at.run()  # the same session, the server gone
    assert not at.exception, [e.value for e in at.exception]
    shown = _texts(at)
    assert at.error and PASSWORD not in shown and "Traceback" not in shown
