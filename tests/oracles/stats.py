"""Summary statistics across iterations: mean, sample standard deviation, 95% CI.

The confidence interval uses Student's t with n - 1 degrees of freedom (iterations are
few, so the normal 1.96 would be too narrow). The critical values come from a table for
1-30 degrees of freedom and, beyond it, the Cornish-Fisher expansion around the normal
quantile, which is within 1e-4 of the exact value there. No scipy needed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

# Two-sided 95% critical values t(0.975, df) for df = 1..30.
_T975 = (
    12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
    2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
    2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
)  # fmt: skip
_Z975 = 1.959963984540054


def t_critical_975(df: int) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom (df >= 1)."""
    if df < 1:
        raise ValueError("degrees of freedom must be at least 1")
    if df <= len(_T975):
        return _T975[df - 1]
    z = _Z975
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    return z + g1 / df + g2 / df**2 + g3 / df**3


@dataclass(frozen=True)
class Summary:
    """Mean, spread and 95% confidence interval of one metric over iterations."""

    n: int
    mean: float | None
    sd: float | None
    ci_low: float | None
    ci_high: float | None


def summarize(values: Iterable[float | None]) -> Summary:
    """Summary of the non-null values; sd and CI need at least two of them."""
    xs = [float(v) for v in values if v is not None and not math.isnan(v)]
    n = len(xs)
    if n == 0:
        return Summary(0, None, None, None, None)
    mean = math.fsum(xs) / n
    if n == 1:
        return Summary(1, mean, None, None, None)
    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
    half = t_critical_975(n - 1) * sd / math.sqrt(n)
    return Summary(n, mean, sd, mean - half, mean + half)


def mean(values: Iterable[float | None]) -> float | None:
    """Mean of the non-null values, None when there are none."""
    return summarize(values).mean
