"""A health endpoint that knows whether the dashboard can read its data.

Streamlit's own ``/_stcore/health`` says "ok" whenever its server answers, also while the
warehouse file is gone or the team's PostgreSQL catalog is down and every page shows an
error panel. A load balancer or an uptime check needs the truth, so ``evalhouse dashboard
--health-port N`` serves ``GET /health`` beside it: 200 ``ok`` when a read of the warehouse
(or catalog) succeeds within ``CHECK_TIMEOUT_S``, else 503 ``unavailable``. The answer says
no more: the port needs no sign-in, and the reason would name the warehouse's absolute path
or the catalog's host, port, database and user to whoever can reach it. The reason (masked)
goes to the dashboard's standard error instead, once each time it changes, for whoever
runs the server.
"""

from __future__ import annotations

import concurrent.futures
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from engine.settings import Paths
from evalhouse.console import err
from warehouse.catalog import Catalog

CHECK_TIMEOUT_S = 5.0
"""Longest a check may take before the warehouse counts as down (a probe must answer)."""
_CHECKS = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="health")


def warehouse_problem(paths: Paths, catalog: Catalog | None) -> str | None:
    """Why the dashboard cannot read its warehouse now (masked), or None when it can."""
    from engine.secrets import mask_text

    def read() -> None:
        from warehouse.queries import Warehouse

        warehouse = Warehouse(paths.warehouse, catalog=catalog)
        warehouse.sql("SELECT count(*) AS runs FROM runs")

    try:
        _CHECKS.submit(read).result(timeout=CHECK_TIMEOUT_S)
    except concurrent.futures.TimeoutError:
        return f"the warehouse did not answer within {CHECK_TIMEOUT_S:.0f} s"
    except Exception as exc:  # any failure to read is "down"; the reason is masked
        where = catalog.label if catalog is not None else str(paths.warehouse)
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return mask_text(f"{where}: {reason}")[:300]
    return None


def serve_health(
    address: str, port: int, paths: Paths, catalog: Catalog | None
) -> ThreadingHTTPServer:
    """Serve ``GET /health`` on ``address:port`` in a daemon thread; returns the server
    (``shutdown()`` stops it)."""

    last: list[str | None] = [None]  # the reason logged last: a probe every few seconds
    lock = threading.Lock()  # would otherwise repeat the same line all night

    def log_change(problem: str | None) -> None:
        with lock:
            if problem != last[0]:
                err(f"health: unavailable: {problem}" if problem else "health: ok again")
                last[0] = problem

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.split("?")[0] != "/health":
                self._answer(404, "not found")
                return
            problem = warehouse_problem(paths, catalog)
            log_change(problem)
            if problem is None:
                self._answer(200, "ok")
            else:
                self._answer(503, "unavailable")

        def _answer(self, status: int, text: str) -> None:
            body = (text + "\n").encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return  # probes every few seconds would drown the dashboard's own log

    server = ThreadingHTTPServer((address, port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True, name="health").start()
    return server
