"""``--output`` writes like a shell redirection: through a symbolic link, a named pipe or a
device, never replacing them with a regular file; a regular file is replaced whole (its
permissions kept); ``-`` is standard output. Replayed on ``traces import``, ``export`` and
``report``."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from engine.settings import Paths
from tests.hostile.conftest import assert_refused, cli, seeded  # noqa: F401 (fixture)

TRACE = (
    '{"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": '
    '{"stringValue": "shop"}}]}, "scopeSpans": [{"spans": [{"traceId": "t1", "spanId": "s1", '
    '"attributes": [{"key": "gen_ai.prompt.0.role", "value": {"stringValue": "user"}}, '
    '{"key": "gen_ai.prompt.0.content", "value": {"stringValue": "How much is Pro?"}}, '
    '{"key": "gen_ai.completion.0.content", "value": {"stringValue": "Pro is $49."}}]}]}]}]}'
)
CLI = (sys.executable, "-m", "evalhouse.cli")


@pytest.fixture
def traces(tmp_path: Path) -> Path:
    path = tmp_path / "traces.json"
    path.write_text(TRACE)
    return path


def _import(capsys: pytest.CaptureFixture[str], traces: Path, output: Path | str) -> str:
    outcome = cli(capsys, "traces", "import", str(traces), "--output", str(output))
    assert outcome.code == 0 and "Traceback" not in outcome.err, outcome.err
    return outcome.out


def test_a_symlink_is_written_through_and_kept(
    traces: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "kept" / "cases.jsonl"
    target.parent.mkdir()
    target.write_text("old\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    _import(capsys, traces, link)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert '"id": "t1"' in target.read_text()


def test_a_named_pipe_gets_the_bytes_and_stays_a_pipe(
    traces: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "cases.fifo"
    os.mkfifo(fifo)
    received: list[str] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    _import(capsys, traces, fifo)
    reader.join(timeout=30)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert '"id": "t1"' in received[0]


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
def test_a_device_node_stays_a_device_node(
    traces: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As root (containers, CI runners) a rename over ``/dev/null`` would replace the
    machine's null device; replayed on a private copy of it (major 1, minor 3)."""
    null = tmp_path / "null"
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    _import(capsys, traces, null)
    found = os.lstat(null)
    assert stat.S_ISCHR(found.st_mode) and found.st_rdev == os.makedev(1, 3)


def test_dash_is_standard_output(traces: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert '"id": "t1"' in _import(capsys, traces, "-")
    assert not Path("-").exists()


def test_dev_stdout_into_a_pipe_works_as_a_normal_user(traces: Path) -> None:
    done = subprocess.run(
        [*CLI, "traces", "import", str(traces), "--output", "/dev/stdout"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert '"id": "t1"' in done.stdout and "Traceback" not in done.stderr


def test_a_regular_file_is_replaced_whole_with_its_permissions(
    traces: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "cases.jsonl"
    output.write_text("old\n")
    output.chmod(0o600)
    inode = output.stat().st_ino
    _import(capsys, traces, output)
    assert output.stat().st_ino != inode  # renamed over, never half-written in place
    assert stat.S_IMODE(output.stat().st_mode) == 0o600
    assert '"id": "t1"' in output.read_text()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_a_directory_is_one_line(
    traces: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outcome = cli(capsys, "traces", "import", str(traces), "--output", str(tmp_path))
    assert_refused(outcome, mentions="is a directory")


def test_export_and_report_write_through_a_link_and_to_dash(
    seeded: Paths,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    home = ["--home", str(seeded.home)]
    target = tmp_path / "target.jsonl"
    link = tmp_path / "export.jsonl"
    link.symlink_to(target)
    outcome = cli(capsys, "export", "R", "--format", "jsonl", "--output", str(link), *home)
    assert outcome.code == 0, outcome.err
    assert link.is_symlink() and target.read_text().count("\n") == 2
    outcome = cli(capsys, "export", "R", "--format", "jsonl", "--output", "-", *home)
    assert outcome.code == 0 and outcome.out.count("\n") == 2, outcome.err
    outcome = cli(capsys, "report", "R", "--baseline", "none", "--output", "-", *home)
    assert outcome.code == 0, outcome.err
    assert outcome.out.lstrip().lower().startswith("<!doctype html")
    assert not Path("-").exists()


def test_report_prints_its_one_line_and_no_streamlit_warning(
    seeded: Paths,  # noqa: F811
    tmp_path: Path,
) -> None:
    output = tmp_path / "r.html"
    done = subprocess.run(
        [
            *CLI,
            "report",
            "R",
            "--home",
            str(seeded.home),
            "--baseline",
            "none",
            "--output",
            str(output),
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [done.stderr.strip()], done.stderr
    assert done.stderr.startswith(f"wrote {output} (") and output.is_file()
