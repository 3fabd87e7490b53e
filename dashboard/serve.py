"""Serve the dashboard: Streamlit's own ``streamlit run``, with the dashboard's modules
imported and its pages visited while the server starts, and its health check saying "ok"
only once they are.

Streamlit imports what a page uses during the first visitor's script run: about two
seconds of altair, pandas, polars and evalhouse on a 2-core machine, paid by whoever
opens the dashboard first; and a page's first run at a million results spends most of
its time in queries every later visit reads from the cache. A thread imports the modules
as soon as the server's runtime exists (importing earlier would make every cached query
warn that no runtime was found), then visits every page in a session of its own
(``dashboard.warmup``), and keeps doing so at each new data version. Until the first
visits are done ``/_stcore/health`` answers 503 "unavailable", as it does before the
runtime starts: a browser's page waits for it before connecting, and a load balancer
sends nobody to a server that would make its first visitor wait. The first visit to a
page then costs what every later one does. What is alive then lives as long as the server,
and is frozen out of the garbage collector's scans (``freeze_long_lived``).

    python -m dashboard.serve run dashboard/streamlit_app.py [streamlit options] -- --home DIR
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import logging
import pkgutil
import sys
import threading
from typing import Any

import dashboard
from dashboard import NO_WARMUP_FLAG, static_index, warmup

RUNTIME_WAIT_S = 60.0
"""How long the import thread waits for Streamlit's runtime before giving up quietly."""

READY = threading.Event()
"""Set when the import thread is done (or gave up): the health check's extra condition."""

log = logging.getLogger("dashboard")

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
    left: list[str] = []
    warmer = None
    try:
        runtime = warmup.runtime_started(RUNTIME_WAIT_S)
        if runtime is None:
            return
        for name in preloaded_modules():
            # A module that fails here fails again, with the page's own error panel, when
            # a page imports it: nothing to report from a background thread.
            try:
                importlib.import_module(name)
            except Exception:
                continue
        if not warmup_wanted():
            data_version()  # the process's first DuckDB connection loads the library's parts
            return
        warmer = warmup.Warmer(runtime, data_version, warmup_headers)
        try:
            left = warmer.warm(warmup.BEFORE_READY_S)
        except Exception as exc:  # the pages then pay their own first visits
            log.warning("warming the pages failed: %s", type(exc).__name__)
    finally:
        freeze_long_lived()
        READY.set()
    if warmer is not None:
        with contextlib.suppress(Exception):
            warmer.warm_rest(left)
        warmer.keep_warm(threading.Event())


def freeze_long_lived() -> int:
    """Take every object alive now out of the cyclic garbage collector's scans, after one
    last collection; the number of objects frozen so far.

    Streamlit runs a full collection after every script run, each fragment's included
    (``runner.postScriptGC``). With the dashboard's modules imported that is ~175,000
    objects, 90 ms of one core holding the interpreter lock, so no message reaches a
    browser meanwhile: half the time of a page's run on the server, measured with py-spy.
    Modules, classes and the warmed caches live as long as the server; what a visit makes
    after this is still collected, and a frozen object no longer referenced is still freed
    (only cycles among frozen objects wait). So it runs once, before any visitor connects:
    a visitor's session frozen with the rest would keep its cycles after it closed."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def warmup_wanted() -> bool:
    """Whether the server visits its own pages (not with ``--no-warmup`` after ``--``)."""
    return NO_WARMUP_FLAG not in sys.argv[1:]


def data_version() -> str | None:
    """The warehouse's data version, read on a connection of its own closed at once (so
    an ingest never waits for the server; Streamlit's caches warn outside a script run);
    None while there is no warehouse to read (the pages report why)."""
    try:
        from dashboard.data import home_paths
        from warehouse.catalog import catalog_from_env
        from warehouse.queries import Warehouse

        return Warehouse(home_paths().warehouse, catalog=catalog_from_env()).data_version()
    except Exception:
        return None


def warmup_headers() -> list[tuple[str, str]] | None:
    """Behind sign-in, the operator's user header naming the warm-up (it only reads); None
    when the access file refuses every page (nothing to warm; the pages say why)."""
    from dashboard.access import AccessError, AccessRefused
    from dashboard.components.identity import access

    try:
        rules = access()
    except (AccessRefused, AccessError):
        return None
    return [] if rules.user_header is None else [(rules.user_header, warmup.WARMUP_USER)]


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
    """``streamlit`` with the arguments given to this module, plus the import thread, and
    the amended ``index.html`` (``dashboard.static_index``)."""
    static_index.serve_amended_index()
    gate_health_on_preload()
    threading.Thread(target=_preload, name="dashboard-preload", daemon=True).start()
    from streamlit.web import cli

    sys.argv = ["streamlit", *sys.argv[1:]]
    cli.main()


if __name__ == "__main__":
    main()
