"""The server visits its own pages: the query cache is warm before anyone opens one.

A page's first visit at 1,000,000 results spends most of its time in the warehouse
(the Overview's queries take 0.6-0.9 s cold); every later visit reads the same results
from the one query cache (``dashboard.data``). So the server pays the first visits
itself: it opens an ordinary Streamlit session in its own process, whose client keeps
nothing but the page list and the end of each run, and runs every page in turn with an
empty URL, the view a visitor opening the page sees first. Each page's queries land in
the shared cache under the same keys a visitor's run asks for.

``dashboard.serve`` runs this before the health check says "ok" (for at most
``BEFORE_READY_S``; the pages left then are warmed right after), and again whenever the
data version changes (a new ingest), at most once per ``POLL_S``, so the first visit of
Monday morning is as quick as the second.

Behind sign-in the warm-up's session carries the operator's user header naming
``WARMUP_USER``: it only reads pages; it never clicks, reviews or launches, and no
network client can reach a session made in-process.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.runtime import Runtime, RuntimeState
from streamlit.runtime.session_manager import ClientContext, SessionClient

BEFORE_READY_S = 30.0
"""Longest the warm-up holds the health check at "unavailable": a huge warehouse makes the
server ready on time and warms its last pages after."""

PAGE_RUN_S = 60.0
"""Longest the warm-up waits for one page's run."""

POLL_S = 60.0
"""How often the server looks for a new data version to warm (and so at most how often
it warms everything again)."""

LOOP_CALL_S = 10.0
"""Longest a call handed to Streamlit's event loop may wait to run."""

WARMUP_USER = "evalhouse-warmup"
"""Who the warm-up's session is behind sign-in (it reads, and nothing else)."""

log = logging.getLogger("dashboard")

T = TypeVar("T")


class _Context(ClientContext):
    def __init__(self, headers: list[tuple[str, str]]) -> None:
        self._headers = headers

    @property
    def headers(self) -> Iterable[tuple[str, str]]:
        return self._headers

    @property
    def cookies(self) -> Mapping[str, str]:
        return {}

    @property
    def remote_ip(self) -> str | None:
        return "127.0.0.1"


class _PageRun(SessionClient):
    """A client that keeps the app's page list and whether the run has ended; the drawn
    page itself is dropped (its results are in the query cache, which is the point)."""

    def __init__(self, headers: list[tuple[str, str]]) -> None:
        self._context = _Context(headers)
        self.pages: list[str] = []
        self.ended = threading.Event()

    def write_forward_msg(self, msg: ForwardMsg) -> None:
        kind = msg.WhichOneof("type")
        if kind == "navigation":
            self.pages = [
                page.page_script_hash for page in msg.navigation.app_pages if not page.is_default
            ]
        # A run cut short for a rerun (a page that sets its URL state) is followed by the
        # rerun: only the last run's end counts.
        elif kind == "script_finished" and (
            msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN
        ):
            self.ended.set()

    @property
    def client_context(self) -> ClientContext | None:
        return self._context


def _on_loop(runtime: Runtime, call: Callable[[], T]) -> T:
    """``call()`` on Streamlit's event loop, where sessions must be made and driven."""

    async def run() -> T:
        return call()

    loop = runtime._get_async_objs().eventloop  # no public handle on it
    return asyncio.run_coroutine_threadsafe(run(), loop).result(timeout=LOOP_CALL_S)


def visit(runtime: Runtime, page_hash: str, headers: list[tuple[str, str]]) -> list[str]:
    """Run one page (``""``: the default page) in a session of its own, as a first
    visitor with an empty URL would; the hashes of the app's other pages, in the
    sidebar's order."""
    client = _PageRun(headers)
    session = _on_loop(runtime, lambda: runtime.connect_session(client=client, user_info={}))
    try:
        msg = BackMsg()
        msg.rerun_script.query_string = ""
        msg.rerun_script.page_script_hash = page_hash
        _on_loop(runtime, lambda: runtime.handle_backmsg(session, msg))
        client.ended.wait(PAGE_RUN_S)
    finally:
        _on_loop(runtime, lambda: runtime.close_session(session))
    return client.pages


def runtime_started(wait_s: float) -> Runtime | None:
    """Streamlit's runtime once it serves sessions, None if it does not within ``wait_s``."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if Runtime.exists():
            runtime = Runtime.instance()
            if runtime.state in (
                RuntimeState.NO_SESSIONS_CONNECTED,
                RuntimeState.ONE_OR_MORE_SESSIONS_CONNECTED,
            ):
                return runtime
        time.sleep(0.05)
    return None


class Warmer:
    """Warms every page, and again at each new data version (``version()``)."""

    def __init__(
        self,
        runtime: Runtime,
        version: Callable[[], str | None],
        headers: Callable[[], list[tuple[str, str]] | None],
    ) -> None:
        self._runtime = runtime
        self._version = version
        self._headers = headers
        self.warmed: str | None = None
        """The data version the pages were last warmed on."""

    def warm(self, budget_s: float | None = None) -> list[str]:
        """Visit the default page, then every other page, until ``budget_s`` runs out;
        the hashes of the pages left unvisited."""
        deadline = None if budget_s is None else time.monotonic() + budget_s
        self.warmed = self._version()
        headers = self._headers()
        if headers is None:  # every page refused: nothing to warm
            return []
        left = visit(self._runtime, "", headers)
        while left and (deadline is None or time.monotonic() < deadline):
            visit(self._runtime, left.pop(0), headers)
        return left

    def warm_rest(self, pages: list[str]) -> None:
        headers = self._headers()
        if headers is None:
            return
        for page in pages:
            visit(self._runtime, page, headers)

    def keep_warm(self, stop: threading.Event) -> None:
        """Every ``POLL_S``: a data version not yet warmed is warmed, all pages."""
        while not stop.wait(POLL_S):
            if self._runtime.state not in (
                RuntimeState.NO_SESSIONS_CONNECTED,
                RuntimeState.ONE_OR_MORE_SESSIONS_CONNECTED,
            ):
                return
            try:
                if self._version() != self.warmed:
                    self.warm()
            except Exception as exc:  # a warm-up never takes the server down
                log.warning("warming the pages failed: %s", type(exc).__name__)
