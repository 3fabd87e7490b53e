"""Is a change bigger than the noise? 95% intervals for a delta between two runs.

Two methods, chosen per domain:

* **iterations** when the run was evaluated several times: the per-iteration domain means
  give a standard error (Student t, df = iterations - 1); the baseline's own spread is
  added when it had several iterations too.
* **paired bootstrap** when there is one iteration: the per-sample deltas (samples matched
  by id) are resampled with replacement; the 2.5th and 97.5th percentiles of the mean
  delta form the interval.

The delta is "beyond noise" when the interval does not contain zero.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.stats import t95

MIN_PAIRS = 5
"""Fewer paired samples than this give no bootstrap verdict (the interval means nothing)."""

BOOTSTRAP_REPS = 2000
"""Resamples of the paired bootstrap."""


@dataclass(frozen=True)
class NoiseCheck:
    """The verdict on one delta."""

    method: str
    """``iterations``, ``bootstrap`` or ``none``."""
    low: float | None = None
    """Lower end of the 95% interval of the delta."""
    high: float | None = None
    """Upper end of the 95% interval of the delta."""
    note: str = ""
    """Why there is no verdict, when there is none."""

    @property
    def beyond_noise(self) -> bool | None:
        """True when the interval excludes zero; None when there is no interval."""
        if self.low is None or self.high is None:
            return None
        return self.low > 0 or self.high < 0

    def label(self) -> str:
        """A short human verdict, e.g. ``beyond noise [+3.1, +9.0] (bootstrap)``."""
        if self.beyond_noise is None:
            return self.note or "no baseline"
        verdict = "beyond noise" if self.beyond_noise else "within noise"
        return f"{verdict} [{self.low:+.1f}, {self.high:+.1f}] ({self.method})"


def iteration_check(
    delta: float | None,
    sd: float | None,
    iterations: int,
    baseline_sd: float | None = None,
    baseline_iterations: int = 1,
) -> NoiseCheck:
    """Interval of ``delta`` from the spread of per-iteration means (t with k - 1 df)."""
    if delta is None or (isinstance(delta, float) and math.isnan(delta)):
        return NoiseCheck("none", note="no baseline")
    if iterations < 2 or sd is None or math.isnan(sd):
        return NoiseCheck("none", note="one iteration")
    variance = sd**2 / iterations
    if baseline_iterations >= 2 and baseline_sd is not None and not math.isnan(baseline_sd):
        variance += baseline_sd**2 / baseline_iterations
    half = t95(iterations - 1) * math.sqrt(variance)
    return NoiseCheck("iterations", delta - half, delta + half)


def bootstrap_check(
    deltas: np.ndarray, reps: int = BOOTSTRAP_REPS, seed: int = 20261101
) -> NoiseCheck:
    """Percentile interval of the mean of paired per-sample ``deltas`` (NaNs dropped).

    The seed is fixed so the page shows the same verdict on every rerun.
    """
    values = np.asarray(deltas, dtype=np.float64)
    values = values[~np.isnan(values)]
    n = values.size
    if n < MIN_PAIRS:
        return NoiseCheck("none", note=f"too few paired samples ({n})")
    rng = np.random.default_rng(seed)
    means = np.empty(reps)
    # Blocks keep the index matrix small on large domains (reps x n int32 at most 64 MB).
    block = max(1, min(reps, 16_000_000 // n))
    for start in range(0, reps, block):
        stop = min(reps, start + block)
        idx = rng.integers(0, n, size=(stop - start, n), dtype=np.int32)
        means[start:stop] = values[idx].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return NoiseCheck("bootstrap", float(low), float(high))
