"""Serve the dashboard: Streamlit's own ``streamlit run``, with the dashboard's modules
imported while the server starts.

Streamlit imports what a page uses during the first visitor's script run: about two
seconds of altair, pandas, polars and evalhouse on a 2-core machine, paid by whoever
opens the dashboard first. A thread imports them as soon as the server's runtime exists
(importing earlier would make every cached query warn that no runtime was found), so the
first page costs what every later one does.

    python -m dashboard.serve run dashboard/streamlit_app.py [streamlit options] -- --home DIR
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import threading
import time

import dashboard

RUNTIME_WAIT_S = 60.0
"""How long the import thread waits for Streamlit's runtime before giving up quietly."""

NOT_PRELOADED = ("dashboard.app_pages", "dashboard.streamlit_app", "dashboard.serve")
"""Page scripts run per visit (importing them would draw nothing, but run their code)."""


def preloaded_modules() -> list[str]:
    """Every dashboard module a page imports: all but the page scripts and this one."""
    names = [
        info.name
        for info in pkgutil.walk_packages(dashboard.__path__, "dashboard.")
        if not info.name.startswith(NOT_PRELOADED)
    ]
    return sorted(names)


def _preload() -> None:
    from streamlit.runtime import Runtime

    deadline = time.monotonic() + RUNTIME_WAIT_S
    while not Runtime.exists():
        if time.monotonic() > deadline:
            return
        time.sleep(0.05)
    for name in preloaded_modules():
        # A module that fails here fails again, with the page's own error panel, when a
        # page imports it: nothing to report from a background thread.
        try:
            importlib.import_module(name)
        except Exception:
            continue


def main() -> None:
    """``streamlit`` with the arguments given to this module, plus the import thread."""
    threading.Thread(target=_preload, name="dashboard-preload", daemon=True).start()
    from streamlit.web import cli

    sys.argv = ["streamlit", *sys.argv[1:]]
    cli.main()


if __name__ == "__main__":
    main()
