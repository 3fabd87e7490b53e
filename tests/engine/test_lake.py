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

from engine.lake import (
    ORPHAN_AGE_S,
    LakeError,
    list_parts,
    partition_dir,
    read_table,
    sweep_orphans,
    temp_part_name,
    write_part,
)
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
    # Kill it mid-write, once it has published a part: a part exists to check, and a
    # temporary part is being written (a fixed sleep gave neither for certain).
    folder = partition_dir(tmp_path, "results", "R", 1)
    deadline = time.monotonic() + 60
    while not (list_parts(tmp_path) and list(folder.glob(".part-*.tmp"))):
        assert proc.poll() is None and time.monotonic() < deadline, "the writer wrote nothing"
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert list_parts(tmp_path)
    for part in list_parts(tmp_path):
        assert pq.read_table(part.path).num_rows == 20000  # every visible part is whole


def _writer(lake: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(lake)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "writing"
    return proc


def test_sweep_never_touches_a_live_writers_temporary_part(tmp_path: Path) -> None:
    """Another process sweeping the lake while a writer works must not kill the writer."""
    proc = _writer(tmp_path)
    try:
        # Sweep every 10 ms until the writer has published two parts while we swept (so
        # sweeps met its live temporary part through whole writes), at most 4 s: the check
        # is about overlapping live writes, not about how long the clock ran.
        start = len(list_parts(tmp_path))
        deadline = time.monotonic() + 4.0
        while time.monotonic() < deadline and len(list_parts(tmp_path)) < start + 2:
            sweep_orphans(tmp_path)
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.01)
        before = len(list_parts(tmp_path))
        # Still publishing parts: poll for the next one instead of a fixed wait.
        deadline = time.monotonic() + 30.0
        while len(list_parts(tmp_path)) <= before and time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.05)
        assert proc.poll() is None
        assert len(list_parts(tmp_path)) > before
    finally:
        proc.kill()  # SIGKILL; a no-op if the writer already died
        proc.wait()
    folder = partition_dir(tmp_path, "results", "R", 1)
    left = list(folder.glob(".part-*.tmp"))
    assert sweep_orphans(tmp_path) == len(left)  # the killed writer's temp file is swept
    assert not list(folder.glob(".part-*.tmp"))
    for part in list_parts(tmp_path):
        assert pq.read_table(part.path).num_rows == 20000


def test_sweep_removes_only_orphans(tmp_path: Path) -> None:
    folder = partition_dir(tmp_path, "claims", "R", 2)
    folder.mkdir(parents=True)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    mine = temp_part_name()
    own_pid, _, host_part = mine.removeprefix(".part-").partition("-")
    host = host_part.split("@", 1)[1]
    names = {
        "live": mine,
        "dead": f".part-{dead.pid}-{'ab' * 16}@{host}",
        "old_live": f".part-{own_pid}-{'cd' * 16}@{host}",
        "other_host": f".part-{dead.pid}-{'ef' * 16}@elsewhere.example.tmp",
        "legacy": ".part-deadbeef.tmp",
    }
    for key, name in names.items():
        path = folder / (name if name.endswith(".tmp") else name + ".tmp")
        path.write_bytes(b"x")
        names[key] = path.name
    old = time.time() - ORPHAN_AGE_S - 60
    os.utime(folder / names["old_live"], (old, old))
    assert sweep_orphans(tmp_path) == 3
    assert sorted(p.name for p in folder.iterdir()) == sorted([names["live"], names["other_host"]])


def test_read_table_reads_only_the_columns_asked_for(tmp_path: Path) -> None:
    write_part(tmp_path, "results", "R", 1, [result_record("R", "a", cost_usd=0.5)])
    write_part(tmp_path, "results", "R", 2, [result_record("R", "b", error="boom")])
    got = read_table(tmp_path, "results", "R", columns=("error", "cost_usd"))
    assert got.column_names == ["error", "cost_usd"]
    assert got.to_pylist() == [
        {"error": None, "cost_usd": 0.5},
        {"error": "boom", "cost_usd": 0.0},
    ]
    one = read_table(tmp_path, "results", "R", 2, ("sample_id",))
    assert one.to_pylist() == [{"sample_id": "b"}]
    empty = read_table(tmp_path, "results", "other-run", columns=("sample_id",))
    assert (empty.num_rows, empty.column_names) == (0, ["sample_id"])
    with pytest.raises(KeyError):
        read_table(tmp_path, "results", "R", columns=("no_such_column",))


def test_a_column_an_older_part_lacks_is_read_as_nulls(tmp_path: Path) -> None:
    path = write_part(tmp_path, "results", "R", 1, [result_record("R", "a", rag_overall=0.5)])
    assert path is not None
    older = pq.read_table(path).drop_columns(["rag_overall"])
    pq.write_table(older, path)  # as a part written before the column existed
    got = read_table(tmp_path, "results", "R", columns=("sample_id", "rag_overall"))
    assert got.to_pylist() == [{"sample_id": "a", "rag_overall": None}]
    assert read_table(tmp_path, "results", "R").column("rag_overall").to_pylist() == [None]
