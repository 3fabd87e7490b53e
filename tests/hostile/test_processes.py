"""Hostile conditions where a real process matters: a dashboard stopped with SIGTERM, a
disk that fills during ingest, a test set that never ends."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from engine.lake import write_part
from engine.settings import Paths
from tests.factories import result_record, run_record

ROOT = Path(__file__).resolve().parents[2]
EVALHOUSE = [sys.executable, "-m", "evalhouse.cli"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _children(pid: int) -> list[int]:
    """Every live descendant of ``pid`` (read from /proc)."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(entry.name))
    return found + [c for child in found for c in _children(child)]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process tree from /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_dashboard_stopped_by_a_signal_leaves_no_child(home: Paths, signum: int) -> None:
    port = _free_port()
    process = subprocess.Popen(
        [*EVALHOUSE, "dashboard", "--port", str(port), "--home", str(home.home)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as page:
                    if page.status == 200:
                        break
            except OSError:
                pass
            assert process.poll() is None and time.monotonic() < deadline, "never answered"
            time.sleep(0.05)  # a short poll: the test waits for the server, not the clock
        children = _children(process.pid)
        assert children, "streamlit runs as a child of evalhouse dashboard"
        process.send_signal(signum)
        assert process.wait(timeout=30) == 0
        deadline = time.monotonic() + 15
        while any(_alive(c) for c in children) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [c for c in children if _alive(c)] == []
    finally:
        if process.poll() is None:
            process.kill()


_COUNTS = (
    "SELECT (SELECT count(*) FROM results) AS n, "
    "(SELECT count(*) FROM ingested_files WHERE status = 'corrupt') AS corrupt"
)
"""The results loaded and the lake files marked corrupt, after an interrupted ingest."""


def _lake_with_rows(home: Paths, samples: int) -> None:
    write_part(home.lake, "runs", "R", 0, [run_record("R")])
    rows = [result_record("R", f"s{i}", response="x" * 2000) for i in range(samples)]
    write_part(home.lake, "results", "R", 1, rows)


def _run(
    home: Paths, *argv: str, limit_bytes: int | None = None
) -> subprocess.CompletedProcess[str]:
    code = (
        "import resource, signal, sys\n"
        "from evalhouse.cli import main\n"
        f"limit = {limit_bytes!r}\n"
        "if limit:\n"
        "    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a failed write, not a kill\n"
        "    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))\n"
        f"sys.exit(main({list(argv)!r} + ['--home', {str(home.home)!r}]))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def _check_full_disk_refusal(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stdout + result.stderr
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr


def test_ingest_onto_a_file_size_limit_stops_in_one_line_and_loses_nothing(home: Paths) -> None:
    _lake_with_rows(home, 400)
    _check_full_disk_refusal(_run(home, "ingest", limit_bytes=300_000))
    again = _run(home, "ingest")
    assert again.returncode == 0, again.stderr
    # Both counts in one query: one CLI start-up instead of two.
    rows = _run(home, "sql", _COUNTS, "--format", "csv")
    assert rows.stdout.splitlines() == ["n,corrupt", "400,0"], rows.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")
def test_ingest_onto_a_full_tmpfs_stops_in_one_line_and_loses_nothing(tmp_path: Path) -> None:
    mount = tmp_path / "small"
    mount.mkdir()
    if os.system(f"mount -t tmpfs -o size=1200k tmpfs {mount} 2>/dev/null") != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        home = Paths(mount)
        _lake_with_rows(home, 200)
        _check_full_disk_refusal(_run(home, "ingest"))
        assert os.system(f"mount -o remount,size=64m {mount}") == 0
        again = _run(home, "ingest")
        assert again.returncode == 0 and "Traceback" not in again.stderr, again.stderr
        rows = _run(home, "sql", _COUNTS, "--format", "csv")
        assert rows.stdout.splitlines() == ["n,corrupt", "200,0"], rows.stderr
    finally:
        os.system(f"umount {mount}")


def test_test_set_that_never_ends_is_refused_at_once(home: Paths) -> None:
    started = time.monotonic()
    result = _run(home, "run", "--test-set", "/dev/zero", "--name", "z")
    assert time.monotonic() - started < 30
    _check_full_disk_refusal(result)
    assert "not a regular file" in result.stderr
