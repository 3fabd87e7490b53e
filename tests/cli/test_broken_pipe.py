"""A reader that stops reading (``evalhouse sql ... | head``): one exit code, no message.

Real processes and a real pipe: the reader takes 100 bytes and closes its end while the
command still has megabytes to write, in every output format.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalhouse.console import EXIT_BROKEN_PIPE

ROOT = Path(__file__).resolve().parents[2]
QUERY = "SELECT range AS n, repeat('x', 40) AS pad FROM range(200000)"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("pipe") / "home"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run(
        [sys.executable, "-m", "evalhouse.cli", "ingest", "--home", str(folder)],
        env=env,
        check=True,
        capture_output=True,
    )
    return folder


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_a_reader_that_goes_away_ends_the_command_quietly(home: Path, fmt: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "evalhouse.cli", "sql", QUERY, "--home", str(home)]
    proc = subprocess.Popen(
        [*command, "--format", fmt, "--max-rows", "200000"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert len(proc.stdout.read(100)) == 100
    proc.stdout.close()
    assert proc.wait(timeout=120) == EXIT_BROKEN_PIPE
    assert proc.stderr.read().decode() == ""
