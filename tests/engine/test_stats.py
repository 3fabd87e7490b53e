"""Mean, sd and t-based 95% CI checked against hand-computed values."""

from __future__ import annotations

import itertools
import math

import pytest

from engine.stats import summarize, t_critical_975

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
