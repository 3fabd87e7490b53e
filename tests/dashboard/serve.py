"""A real `evalhouse dashboard` process on a free loopback port, for the browser tests."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest


def free_port() -> int:
    """A TCP port nothing listens on (127.0.0.1)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serve_dashboard(home: Path, log_dir: Path, *, warmup: bool = False) -> Iterator[str]:
    """Start the dashboard over ``home``, wait until it is healthy, yield its URL, stop it
    (its whole process group) afterwards; the server's output goes to ``log_dir``. The
    server warms its pages only with ``warmup`` (``tests/dashboard/test_dash_warmup.py``
    tests that; the browser tests test pages, and each warm-up is a dozen page runs)."""
    script = Path(sys.executable).with_name("evalhouse")
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "evalhouse.cli"]
    port = free_port()
    # The server reads the file under ``home``: never a catalog that an earlier in-process
    # CLI call exported (module fixtures start before the per-test environment reset).
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVALHOUSE_CATALOG")}
    no_warmup = [] if warmup else ["--no-warmup"]
    with open(log_dir / "dashboard.log", "wb") as log:
        server = subprocess.Popen(
            [*cmd, "dashboard", "--port", str(port), "--home", str(home), *no_warmup],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                        if r.read().strip() == b"ok":
                            break
                except OSError:
                    pass
                if time.monotonic() > deadline or server.poll() is not None:
                    pytest.fail(f"dashboard did not start; see {log.name}")
                time.sleep(0.05)  # a short poll: each browser module waits for its server
            yield url
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=20)
