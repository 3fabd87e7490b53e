"""The dashboard's server imports the page modules while it starts, not in the first
visitor's script run."""

from __future__ import annotations

from pathlib import Path

from dashboard.serve import preloaded_modules
from engine.settings import Paths
from evalhouse.processes import dashboard_command


def test_every_page_module_but_the_scripts_is_preloaded() -> None:
    names = preloaded_modules()
    assert {"dashboard.charts", "dashboard.data", "dashboard.components.tables"} <= set(names)
    assert not [n for n in names if n.startswith(("dashboard.app_pages", "dashboard.streamlit"))]


def test_the_cli_serves_through_it(tmp_path: Path) -> None:
    command = dashboard_command(Paths(tmp_path), 8501, "127.0.0.1")
    assert command[1:4] == ["-m", "dashboard.serve", "run"]
