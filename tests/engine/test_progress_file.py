"""The spec's ``.progress.json`` is written atomically, also by several writers at once."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path

from engine.progress import ProgressEntry, write_progress_file


def _entry(i: int) -> ProgressEntry:
    return ProgressEntry(
        hash=f"h{i}",
        query_log_id=f"q{i}",
        question=f"question {i}?",
        completed_at=datetime(2026, 1, 1, tzinfo=UTC),
        result={"accuracy": i},
    )


def test_writers_in_one_process_never_collide(tmp_path: Path) -> None:
    path = tmp_path / "R" / "iteration-1" / ".progress.json"
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def write(n: int) -> None:
        start.wait()
        try:
            for _ in range(40):
                write_progress_file(
                    path,
                    test_set_name="t",
                    iteration=1,
                    total=10,
                    entries=[_entry(i) for i in range(n + 1)],
                )
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    doc = json.loads(path.read_text(encoding="utf-8"))
    completed = doc["statistics"]["completedQuestions"]
    assert 1 <= completed <= 8 and len(doc["entries"]) == completed
    assert doc["statistics"]["pendingQuestions"] == 10 - completed
    assert [p.name for p in path.parent.iterdir()] == [".progress.json"]  # no temp left
