"""A trace's recorded steps count against the row limit byte for byte, however the size
is found: a trajectory just under the limit is kept, one byte over is refused with its
exact size, and values whose JSON grows when Python writes it are measured as written."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine.models import TrajectoryStep
from engine.testsets.base import MAX_ROW_BYTES, RowError
from engine.testsets.traces.record import TraceFields, to_case


def _fields(output: Any) -> TraceFields:
    step = TrajectoryStep(kind="tool", name="lookup", output=output, start_ms=0.0)
    return TraceFields(
        trace_id="t1", query="q?", response="a.", source="openinference", trajectory=(step,)
    )


def _size(fields: TraceFields) -> int:
    """The row size as the limit is defined: text plus the steps as Python writes them."""
    steps = [s.model_dump(mode="json", exclude_defaults=True) for s in fields.trajectory]
    text = len(fields.query.encode()) + len(fields.response.encode())
    return text + len(json.dumps(steps, ensure_ascii=False).encode("utf-8"))


@pytest.mark.parametrize("over", [0, 1])
def test_a_trajectory_at_the_limit_is_kept_and_one_byte_over_is_refused(over: int) -> None:
    base = _size(_fields("é"))
    fields = _fields("é" + "x" * (MAX_ROW_BYTES - base + over))
    assert _size(fields) == MAX_ROW_BYTES + over
    if over:
        with pytest.raises(RowError, match=f"{MAX_ROW_BYTES + 1:,} bytes of text"):
            to_case(fields)
    else:
        assert to_case(fields).trajectory == fields.trajectory


def test_values_written_longer_by_python_are_measured_as_python_writes_them() -> None:
    # Many small floats and short lists: the spaces and exponents Python adds make the
    # written steps a good deal longer than their compact JSON.
    output = [[1e-7, 0] for _ in range(90_000)]
    fields = _fields(output)
    size = _size(fields)
    assert size > MAX_ROW_BYTES > len(json.dumps(output, separators=(",", ":")))
    with pytest.raises(RowError, match=f"{size:,} bytes of text"):
        to_case(fields)
