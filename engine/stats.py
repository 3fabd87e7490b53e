"""95% intervals: the one home of their quantiles and formulas.

The run's ``--until-ci`` stop rule, the dashboard's noise checks and cards, and the
pairwise win rates (the ``pairwise_summary`` view spells ``Z95`` in SQL; a test checks that
it agrees) all take their 95% quantiles from here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Z95 = 1.96
"""Two-sided 95% quantile of the standard normal."""

_T95 = {
    1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
    9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131,
    16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 21: 2.080, 22: 2.074,
    23: 2.069, 24: 2.064, 25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048, 29: 2.045,
    30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980,
}  # fmt: skip
"""Two-sided 95% quantiles of Student's t by degrees of freedom (no scipy here)."""


def t95(df: int) -> float:
    """The two-sided 95% Student t quantile for ``df`` degrees of freedom: exact up to 30,
    then the next tabled value below (conservative), ``Z95`` beyond 120."""
    if df < 1:
        raise ValueError("degrees of freedom must be at least 1")
    if df > 120:
        return Z95
    return _T95[max(d for d in _T95 if d <= df)]


def t_interval_width(values: Sequence[float]) -> float | None:
    """Full width of the 95% t-interval of the mean of ``values`` (None below two values):
    2 * t(0.975, n - 1) * s / sqrt(n)."""
    n = len(values)
    if n < 2:
        return None
    mean = sum(values) / n
    variance = sum((x - mean) ** 2 for x in values) / (n - 1)
    return 2 * t95(n - 1) * math.sqrt(variance / n)


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion (95% for z = 1.96); (0, 1) when n = 0."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def paired_interval(differences: Sequence[float]) -> tuple[float, float | None, float | None]:
    """Mean of paired differences (the same items measured twice) with the ends of its 95%
    t-interval; the ends are None below two pairs. Pairing is what lets a judge change be
    told apart on a few dozen anchors: each item's own difficulty cancels out."""
    if not differences:
        raise ValueError("no differences")
    mean = sum(differences) / len(differences)
    width = t_interval_width(differences)
    if width is None:
        return mean, None, None
    return mean, mean - width / 2, mean + width / 2
