"""Krippendorff's alpha: how far the values that several coders (reviewers, a judge's
repeated asks, a jury's judges) gave the same units agree beyond chance.

alpha = 1 - D_o / D_e, from the coincidence matrix of the values pairable within units
(Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability"): D_o is the mean squared
difference of values given to the same unit, D_e that of all pairable values whatever
their unit. 1 is perfect agreement, 0 agreement no better than chance, below 0 systematic
disagreement. Units with fewer than two values carry no pair and are left out. Missing
values (None, NaN) are allowed: coders need not rate every unit.

The level decides the difference of two values: ``nominal`` (same or not), ``ordinal``
(ranks, weighted by how many values lie between), ``interval`` (squared difference).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

Level = Literal["nominal", "ordinal", "interval"]


def krippendorff_alpha(
    units: Sequence[Sequence[float | None]], level: Level = "interval"
) -> float | None:
    """Alpha of the values given to each unit (one sequence of values per unit, in any
    order). None when it is undefined: fewer than two pairable values, or a single value
    everywhere (no variation to agree on)."""
    values = sorted(
        {float(v) for unit in units for v in unit if v is not None and not math.isnan(v)}
    )
    if len(values) < 2:
        return None
    index = {v: i for i, v in enumerate(values)}
    coincidences = np.zeros((len(values), len(values)))
    for unit in units:
        present = [index[float(v)] for v in unit if v is not None and not math.isnan(v)]
        m = len(present)
        if m < 2:
            continue
        counts = np.bincount(present, minlength=len(values)).astype(float)
        # every ordered pair of values of the unit from different coders, weighted 1/(m-1)
        pairs = np.outer(counts, counts) - np.diag(counts)
        coincidences += pairs / (m - 1)
    totals = coincidences.sum(axis=1)
    n = totals.sum()
    if n < 2:
        return None
    delta = _squared_differences(np.array(values), totals, level)
    observed = float((coincidences * delta).sum())
    expected = float((np.outer(totals, totals) * delta).sum()) / (n - 1)
    if expected == 0.0:
        return None
    return float(1.0 - observed / expected)


def _squared_differences(
    values: npt.NDArray[np.float64], totals: npt.NDArray[np.float64], level: Level
) -> npt.NDArray[np.float64]:
    """The metric difference delta squared of every pair of values at ``level``."""
    if level == "nominal":
        return 1.0 - np.eye(len(values))
    if level == "interval":
        return np.subtract.outer(values, values) ** 2
    # ordinal: the values between c and k (both included), less half of c's and k's own
    cumulative = np.cumsum(totals)
    low = np.minimum.outer(np.arange(len(values)), np.arange(len(values)))
    high = np.maximum.outer(np.arange(len(values)), np.arange(len(values)))
    between = cumulative[high] - cumulative[low] + totals[low]
    return (between - (totals[low] + totals[high]) / 2.0) ** 2
