"""The server visits its own pages before its health check says "ok", so the first visitor
reads the query cache; and warms them again when a new data version appears."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path
from typing import Any, cast

import pytest
from streamlit.runtime import Runtime, RuntimeState

from dashboard import warmup
from tests.dashboard.fixture_home import build_fixture_home
from tests.dashboard.serve import serve_dashboard

CACHE_BYTES = re.compile(
    r'^cache_memory_bytes\{cache_type="st_cache_data",cache="[^"]*_cached"\} (\d+)', re.M
)


def _cached_bytes(url: str) -> int:
    with urllib.request.urlopen(f"{url}/_stcore/metrics", timeout=10) as reply:
        text = reply.read().decode()
    return sum(int(n) for n in CACHE_BYTES.findall(text))


def test_the_query_cache_is_full_before_anyone_visits(tmp_path: Path) -> None:
    home = build_fixture_home(tmp_path)
    with serve_dashboard(home.home, tmp_path, warmup=True) as url:
        # Nobody has opened a page: whatever the one query cache holds, the warm-up put there.
        assert _cached_bytes(url) > 0, (tmp_path / "dashboard.log").read_text()


class _Runtime:
    state = RuntimeState.NO_SESSIONS_CONNECTED


def test_each_new_data_version_is_warmed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    visits: list[str] = []

    def visit(runtime: Any, page: str, headers: list[tuple[str, str]]) -> list[str]:
        visits.append(page)
        return ["trends", "claims"] if page == "" else []

    versions = iter(["v1", "v1", "v1", "v2", "v2"])
    stop = threading.Event()

    def version() -> str:
        value = next(versions, None)
        if value is None:
            stop.set()
            return "v2"
        return value

    monkeypatch.setattr(warmup, "visit", visit)
    monkeypatch.setattr(warmup, "POLL_S", 0.001)
    warmer = warmup.Warmer(cast(Runtime, _Runtime()), version, list)
    assert warmer.warm(budget_s=0.0) == ["trends", "claims"]  # no time left: the rest later
    warmer.warm_rest(["trends", "claims"])
    assert visits == ["", "trends", "claims"]
    warmer.keep_warm(stop)
    # v1 again twice: nothing; v2 once: every page, once.
    assert visits == ["", "trends", "claims", "", "trends", "claims"]
    assert warmer.warmed == "v2"


def test_nothing_is_warmed_where_every_page_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    visits: list[str] = []
    monkeypatch.setattr(warmup, "visit", lambda runtime, page, headers: visits.append(page))
    warmer = warmup.Warmer(cast(Runtime, _Runtime()), lambda: "v1", lambda: None)
    assert warmer.warm() == []
    warmer.warm_rest(["trends"])
    assert visits == []


def test_no_warmup_reaches_the_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dashboard import serve
    from engine.settings import Paths
    from evalhouse.processes import dashboard_command

    command = dashboard_command(Paths(tmp_path), 8501, "127.0.0.1", warmup=False)
    after = command[command.index("--") + 1 :]
    assert "--no-warmup" in after
    assert "--no-warmup" not in dashboard_command(Paths(tmp_path), 8501, "127.0.0.1")
    monkeypatch.setattr("sys.argv", ["streamlit", *after])
    assert not serve.warmup_wanted()
    monkeypatch.setattr("sys.argv", ["streamlit", "--", "--home", str(tmp_path)])
    assert serve.warmup_wanted()


def test_what_lives_as_long_as_the_server_is_out_of_the_collectors_scans() -> None:
    # Streamlit collects after every script run: its cost is the objects it must scan. In a
    # process of its own, as the server's: freezing this one would change every later test's.
    probe = (
        "import gc, json\n"
        "from dashboard import serve\n"
        "scanned = len(gc.get_objects())\n"
        "frozen = serve.freeze_long_lived()\n"
        "left = len(gc.get_objects())\n"
        "made_since = [[i] for i in range(1000)]\n"
        "print(json.dumps([scanned, frozen, left, len(gc.get_objects())]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    scanned, frozen, left, after_a_visit = json.loads(out.stdout.splitlines()[-1])
    assert frozen >= scanned // 2
    assert left < scanned // 10
    assert after_a_visit >= left + 1000  # what a visit makes is scanned (and freed)
