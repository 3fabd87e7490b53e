"""Serve the dashboard: Streamlit's own ``streamlit run``, with the dashboard's modules
imported while the server starts, and its health check saying "ok" only once they are.

Streamlit imports what a page uses during the first visitor's script run: about two
seconds of altair, pandas, polars and evalhouse on a 2-core machine, paid by whoever
opens the dashboard first. A thread imports them as soon as the server's runtime exists
(importing earlier would make every cached query warn that no runtime was found), and
opens the warehouse once (the process's first DuckDB connection loads the library's
parts). Until that is done ``/_stcore/health`` answers 503 "unavailable", as it does
before the runtime starts: a browser's page waits for it before connecting, and a load
balancer sends nobody to a server that would make its first visitor wait for the
imports. The first page then costs what every later one does.

    python -m dashboard.serve run dashboard/streamlit_app.py [streamlit options] -- --home DIR
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import threading
import time
from typing import Any

import dashboard

RUNTIME_WAIT_S = 60.0
"""How long the import thread waits for Streamlit's runtime before giving up quietly."""

READY = threading.Event()
"""Set when the import thread is done (or gave up): the health check's extra condition."""

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

    try:
        deadline = time.monotonic() + RUNTIME_WAIT_S
        while not Runtime.exists():
            if time.monotonic() > deadline:
                return
            time.sleep(0.05)
        for name in preloaded_modules():
            # A module that fails here fails again, with the page's own error panel, when
            # a page imports it: nothing to report from a background thread.
            try:
                importlib.import_module(name)
            except Exception:
                continue
        _open_warehouse_once()
    finally:
        READY.set()


def _open_warehouse_once() -> None:
    """Read the data version: the first connection (DuckDB's parts loaded, the file's
    catalog read) costs the server's start, not the first page. Closed again at once, so
    an ingest never waits for the server; a warehouse that cannot be read is the pages'
    to report."""
    try:
        from dashboard.data import home_paths
        from warehouse.catalog import catalog_from_env
        from warehouse.queries import Warehouse

        # Not the pages' cached facade: Streamlit's caches warn outside a script run.
        Warehouse(home_paths().warehouse, catalog=catalog_from_env()).data_version()
    except Exception:
        return


def gate_health_on_preload() -> None:
    """Make Streamlit's health check answer "unavailable" until ``READY`` is set."""
    from streamlit.runtime import Runtime

    started: Any = Runtime.is_ready_for_browser_connection

    async def ready(runtime: Runtime) -> tuple[bool, str]:
        ok, message = await started.fget(runtime)
        if ok and not READY.is_set():
            return False, "unavailable"
        return ok, message

    Runtime.is_ready_for_browser_connection = property(ready)  # type: ignore[method-assign,assignment]


def main() -> None:
    """``streamlit`` with the arguments given to this module, plus the import thread."""
    gate_health_on_preload()
    threading.Thread(target=_preload, name="dashboard-preload", daemon=True).start()
    from streamlit.web import cli

    sys.argv = ["streamlit", *sys.argv[1:]]
    cli.main()


if __name__ == "__main__":
    main()
