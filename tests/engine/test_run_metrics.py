"""An iteration's metrics come from the few result columns the runner reads back."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from engine.models import ResultRecord
from engine.run.metrics import METRIC_COLUMNS, metrics_by_candidate
from tests.factories import result_record

FINISHED = datetime(2026, 1, 1)


def _filled(sample_id: str, n: int) -> dict[str, Any]:
    """A result row with every field holding a value (a metric reading a field that is
    not in METRIC_COLUMNS would then see a value here and None from the runner)."""
    row = result_record("R", sample_id).model_dump()
    for name, field in ResultRecord.model_fields.items():
        if name in ("run_id", "iteration", "sample_id", "error", "candidate"):
            continue
        annotation = str(field.annotation)
        if "float" in annotation:
            row[name] = 0.25 + n
        elif "int" in annotation:
            row[name] = 3 + n
        elif "bool" in annotation:
            row[name] = n % 2 == 0
        elif "str" in annotation:
            row[name] = f"{name} {n}"
    row["candidate"] = "" if n % 2 else "b"
    return row


def test_metrics_from_the_columns_read_back_equal_metrics_from_whole_rows() -> None:
    rows = [_filled(f"s{i}", i) for i in range(6)]
    rows[1]["error"] = "timeout"
    rows[2]["judge_faithfulness"] = 1.0  # a low score: its reasoning is reported
    narrowed = [{name: row.get(name) for name in METRIC_COLUMNS} for row in rows]
    by_candidate = metrics_by_candidate("R", 1, rows, FINISHED)
    assert [m.candidate for m in by_candidate] == ["", "b"]
    assert metrics_by_candidate("R", 1, narrowed, FINISHED) == by_candidate
    assert all(name in ResultRecord.model_fields for name in METRIC_COLUMNS)
