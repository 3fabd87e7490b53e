"""``evalhouse dashboard --health-port``: GET /health says whether the warehouse or the
catalog can be read, masked, within its time budget (Streamlit's own health says "ok"
whenever its server answers)."""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

import pytest

from engine.settings import resolve_paths
from evalhouse.cli import main
from evalhouse.health import serve_health
from tests.dashboard.serve import free_port
from warehouse.catalog import Catalog

PASSWORD = "pw-" + "5e4d3c2b1a"


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_ok_with_a_warehouse_unavailable_without(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = resolve_paths(tmp_path / "home")
    assert main(["ingest", "--home", str(home.home)]) == 0
    port = free_port()
    server = serve_health("127.0.0.1", port, home, None)
    try:
        assert _get(f"http://127.0.0.1:{port}/health") == (200, "ok\n")
        assert _get(f"http://127.0.0.1:{port}/other")[0] == 404
        home.warehouse.unlink()
        capsys.readouterr()
        for _ in range(3):  # the reason is logged once, not once per probe
            assert _get(f"http://127.0.0.1:{port}/health") == (503, "unavailable\n")
        logged = capsys.readouterr().err.splitlines()
        assert len(logged) == 1 and logged[0].startswith("health: unavailable: ")
        assert str(home.warehouse) in logged[0]  # for whoever runs the server, not the probe
    finally:
        server.shutdown()


def test_a_catalog_that_is_down_is_unavailable_with_its_password_masked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Port 9 on loopback: nothing listens, the connection is refused at once.
    conninfo = f"host=127.0.0.1 port=9 dbname=evalhouse user=ev password={PASSWORD}"
    catalog = Catalog(conninfo, tmp_path / "data")
    port = free_port()
    server = serve_health("127.0.0.1", port, resolve_paths(tmp_path / "home"), catalog)
    try:
        status, body = _get(f"http://127.0.0.1:{port}/health")
    finally:
        server.shutdown()
    # Nobody signs in to the health port: the answer names no host, port, database or user.
    assert (status, body) == (503, "unavailable\n")
    logged = capsys.readouterr().err
    assert "unavailable" in logged and PASSWORD not in logged and "Traceback" not in logged


def test_a_port_in_use_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        args = ["dashboard", "--home", str(tmp_path / "h"), "--health-port", str(port)]
        assert main(args) == 2
    assert f"--health-port {port}:" in capsys.readouterr().err
