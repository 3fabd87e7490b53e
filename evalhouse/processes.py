"""The processes the CLI starts: the dashboard server, supervised in the foreground
(``engine.processes`` holds the launching itself, shared with the dashboard)."""

from __future__ import annotations

import sys
from pathlib import Path

from engine.processes import serve_child
from engine.settings import Paths

__all__ = ["dashboard_command", "serve_child"]

APP = Path(__file__).resolve().parent.parent / "dashboard" / "streamlit_app.py"
"""The Streamlit entry point of the dashboard."""


def dashboard_command(paths: Paths, port: int, address: str) -> list[str]:
    """The streamlit command line that serves the dashboard."""
    return [
        sys.executable, "-m", "dashboard.serve", "run", str(APP),
        "--server.address", address,
        "--server.port", str(port),
        "--server.headless", "true",
        "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none",
        "--client.toolbarMode", "viewer",
        "--", "--home", str(paths.home),
    ]  # fmt: skip
