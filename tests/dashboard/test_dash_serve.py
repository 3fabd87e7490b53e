"""The dashboard's server imports the page modules while it starts, not in the first
visitor's script run, and says it is healthy only once it has."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from dashboard import serve
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


def test_health_says_unavailable_until_the_imports_are_done(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from streamlit.runtime import Runtime, RuntimeState

    # The property is restored when the test ends; the server process patches it for life.
    monkeypatch.setattr(
        Runtime, "is_ready_for_browser_connection", Runtime.is_ready_for_browser_connection
    )
    monkeypatch.setattr(serve, "READY", threading.Event())
    serve.gate_health_on_preload()
    runtime = object.__new__(Runtime)

    def health(state: RuntimeState) -> tuple[bool, str]:
        runtime._state = state
        answer: tuple[bool, str] = asyncio.run(runtime.is_ready_for_browser_connection)
        return answer

    assert health(RuntimeState.INITIAL) == (False, "unavailable")
    assert health(RuntimeState.NO_SESSIONS_CONNECTED) == (False, "unavailable")
    serve.READY.set()
    assert health(RuntimeState.NO_SESSIONS_CONNECTED) == (True, "ok")
    assert health(RuntimeState.STOPPING) == (False, "unavailable")


def test_the_import_thread_sets_ready_even_when_the_runtime_never_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(serve, "READY", threading.Event())
    monkeypatch.setattr(serve, "RUNTIME_WAIT_S", 0.1)
    serve._preload()
    assert serve.READY.is_set()
