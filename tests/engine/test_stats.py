"""Mean, sd and t-based 95% CI checked against hand-computed values."""

from __future__ import annotations

import itertools
import math
from datetime import datetime
from pathlib import Path

import pytest

from engine.models import IterationMetricsRecord
from tests.oracles.stats import summarize, t_critical_975

# scipy.stats.t.ppf(0.975, df) for a few df beyond the table (reference values).
EXACT = {31: 2.039513, 40: 2.021075, 60: 2.000298, 120: 1.979930, 1000: 1.962339}


def test_table_values() -> None:
    assert t_critical_975(1) == pytest.approx(12.7062, abs=1e-4)
    assert t_critical_975(4) == pytest.approx(2.7764, abs=1e-4)
    assert t_critical_975(30) == pytest.approx(2.0423, abs=1e-4)


@pytest.mark.parametrize(("df", "value"), sorted(EXACT.items()))
def test_expansion_beyond_the_table(df: int, value: float) -> None:
    assert t_critical_975(df) == pytest.approx(value, abs=2e-4)


def test_critical_values_decrease_towards_the_normal() -> None:
    values = [t_critical_975(df) for df in range(1, 200)]
    assert all(a > b for a, b in itertools.pairwise(values))
    assert values[-1] > 1.959963984540054


def test_summary_by_hand() -> None:
    got = summarize([70.0, 80.0, 90.0])
    assert got.n == 3 and got.mean == pytest.approx(80.0)
    assert got.sd == pytest.approx(10.0)
    half = 4.3027 * 10.0 / math.sqrt(3)
    assert got.ci_low == pytest.approx(80.0 - half, abs=1e-3)
    assert got.ci_high == pytest.approx(80.0 + half, abs=1e-3)


def test_nulls_are_ignored_and_small_samples() -> None:
    assert summarize([]).mean is None
    one = summarize([None, 3.0, float("nan")])
    assert (one.n, one.mean, one.sd, one.ci_low) == (1, 3.0, None, None)
    same = summarize([5.0, 5.0])
    assert same.sd == 0.0 and same.ci_low == same.ci_high == 5.0


def test_t_needs_positive_df() -> None:
    with pytest.raises(ValueError):
        t_critical_975(0)


def test_run_metrics_view_matches_engine_stats(tmp_path: Path) -> None:
    """The warehouse view computes the same mean, sd and CI as engine.stats."""
    duckdb = pytest.importorskip("duckdb")
    from warehouse.schema import ddl

    view = Path(__file__).resolve().parents[2] / "warehouse/sql/views/50_run_metrics.sql"
    con = duckdb.connect()
    con.execute(ddl())
    con.execute(view.read_text(encoding="utf-8"))
    rows: list[IterationMetricsRecord] = []
    accuracy = {"a": [70.0, 80.0, 90.0], "b": [50.0 + (i % 7) * 1.5 for i in range(40)], "c": [1.0]}
    for run_id, values in accuracy.items():
        for i, value in enumerate(values, start=1):
            rows.append(
                IterationMetricsRecord(
                    run_id=run_id,
                    iteration=i,
                    samples=10,
                    errors=i % 2,
                    accuracy_mean=value,
                    finished_at=datetime(2026, 1, 1),
                )
            )
    # A duplicate state of one iteration: only the latest counts.
    rows.append(
        rows[0].model_copy(update={"accuracy_mean": 0.0, "finished_at": datetime(2025, 1, 1)})
    )
    names = list(IterationMetricsRecord.model_fields)
    marks = ", ".join("?" * len(names))
    con.executemany(
        f"INSERT INTO iteration_metrics ({', '.join(names)}) VALUES ({marks})",
        [[getattr(r, n) for n in names] for r in rows],
    )
    got = {
        (r[0], r[1]): r[2:]
        for r in con.execute(
            "SELECT run_id, metric, iterations, mean, sd, ci_low, ci_high FROM run_metrics"
        ).fetchall()
    }
    for run_id, values in accuracy.items():
        want = summarize(values)
        n, mean, sd, low, high = got[(run_id, "accuracy")]
        assert n == want.n and mean == pytest.approx(want.mean)
        for a, b in ((sd, want.sd), (low, want.ci_low), (high, want.ci_high)):
            assert (a is None and b is None) or a == pytest.approx(b, abs=1e-9)
    assert got[("a", "error_rate")][1] == pytest.approx((0.1 + 0 + 0.1) / 3)
    assert ("a", "judge_faithfulness") not in got  # no values, no row
