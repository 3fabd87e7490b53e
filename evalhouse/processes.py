"""The processes the CLI starts: the dashboard server, supervised in the foreground
(``engine.processes`` holds the launching itself, shared with the dashboard)."""

from __future__ import annotations

import sys
from pathlib import Path

from dashboard import NO_WARMUP_FLAG
from engine.processes import serve_child
from engine.settings import Paths

__all__ = ["dashboard_command", "serve_child"]

APP = Path(__file__).resolve().parent.parent / "dashboard" / "streamlit_app.py"
"""The Streamlit entry point of the dashboard."""


def dashboard_command(
    paths: Paths, port: int, address: str, *, sign_in_required: bool = False, warmup: bool = True
) -> list[str]:
    """The streamlit command line that serves the dashboard; ``sign_in_required`` makes the
    server refuse every page without sign-in for its whole life, whatever becomes of the
    access file; without ``warmup`` the server does not visit its own pages
    (``dashboard.warmup``)."""
    pinned = ["--sign-in-required"] if sign_in_required else []
    if not warmup:
        pinned.append(NO_WARMUP_FLAG)
    return [
        sys.executable, "-m", "dashboard.serve", "run", str(APP),
        "--server.address", address,
        "--server.port", str(port),
        "--server.headless", "true",
        "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none",
        "--client.toolbarMode", "viewer",
        "--", "--home", str(paths.home), *pinned,
    ]  # fmt: skip
