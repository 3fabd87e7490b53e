"""The lake writes parts atomically and never rewrites one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from engine.lake import LakeError, list_parts, partition_dir, read_table, write_part
from tests.factories import result_record


def test_parts_are_numbered_and_never_rewritten(tmp_path: Path) -> None:
    first = write_part(tmp_path, "results", "R", 1, [result_record("R", "a")])
    second = write_part(tmp_path, "results", "R", 1, [result_record("R", "b")])
    assert first is not None and second is not None
    assert (first.name, second.name) == ("part-000001.parquet", "part-000002.parquet")
    assert pq.read_table(first).column("sample_id").to_pylist() == ["a"]
    assert [p.path for p in list_parts(tmp_path)] == [first, second]
    assert read_table(tmp_path, "results", "R").column("sample_id").to_pylist() == ["a", "b"]


def test_layout_and_validation(tmp_path: Path) -> None:
    assert partition_dir(tmp_path, "claims", "R-1", 3) == (
        tmp_path / "claims" / "run_id=R-1" / "iteration=3"
    )
    with pytest.raises(LakeError):
        partition_dir(tmp_path, "claims", "../escape", 1)
    with pytest.raises(LakeError):
        partition_dir(tmp_path, "nope", "R", 1)
    assert write_part(tmp_path, "results", "R", 1, []) is None


def test_records_are_validated_before_writing(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        write_part(tmp_path, "results", "R", 1, [{"run_id": "R"}])
    assert list_parts(tmp_path) == []


WRITER = """
import sys
from pathlib import Path
from engine.lake import write_part
from tests.factories import result_record
rows = [result_record("R", f"s{i}", response="x" * 2000) for i in range(20000)]
print("writing", flush=True)
while True:
    write_part(Path(sys.argv[1]), "results", "R", 1, rows)
"""


def test_killed_writer_leaves_no_visible_partial_part(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "writing"
    time.sleep(1.5)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    for part in list_parts(tmp_path):
        assert pq.read_table(part.path).num_rows == 20000  # every visible part is whole
