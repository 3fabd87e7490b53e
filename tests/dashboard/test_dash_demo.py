"""`evalhouse demo` on a fresh home serves the dashboard first and scores the demo runs
after, saying so; Ctrl-C (SIGINT) stops both cleanly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from engine.demo_run import PROGRESS_FILE
from tests.dashboard.serve import free_port


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
            return bool(r.read().strip() == b"ok")
    except OSError:
        return False


def test_demo_serves_first_and_stops_on_sigint(tmp_path: Path) -> None:
    home = tmp_path / "home"
    port = free_port()
    script = Path(sys.executable).with_name("evalhouse")
    log = tmp_path / "demo.log"
    with open(log, "wb") as out:
        demo = subprocess.Popen(
            [str(script), "demo", "--home", str(home), "--port", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while not _healthy(url):
            assert demo.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "no dashboard within 90 s"
            time.sleep(0.05)  # a short poll: the test waits for the server, not the clock
        # healthy while the first run is still being scored
        progress = json.loads((home / PROGRESS_FILE).read_text())
        assert progress == {"done": 0, "total": 4}
        assert (home / "warehouse.duckdb").is_file()
        text = log.read_text()
        assert "the demo runs land there one by one" in text
    finally:
        os.killpg(demo.pid, signal.SIGINT)  # what Ctrl-C in the terminal sends
        code = demo.wait(timeout=60)
    assert code == 0, log.read_text()
    assert not (home / PROGRESS_FILE).exists()
    assert not _healthy(url)
