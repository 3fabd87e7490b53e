"""Is a change bigger than the noise? The one 95% interval of a change between two runs.

**Paired bootstrap over samples, each sample's iterations kept together.** Every sample
present in both runs gives one paired delta: the challenger's value minus the baseline's,
each the mean over that sample's iterations (and candidates). The samples are resampled
with replacement and the 2.5th and 97.5th percentiles of the mean delta form the interval.

Resampling whole samples is what makes the interval count every source of noise: which
questions happened to be asked (sample variance) and how differently the judge or target
answered on repeats (iteration variance, inside each sample's mean). Repeats narrow the
interval only as far as they really reduce a sample's noise; a judge that answers the same
on every repeat adds nothing, so five identical iterations read exactly like one. (The
spread between per-iteration means alone, the older method, measured only the repeats and
called any change beyond noise when the judge was deterministic.) From ``LARGE_SAMPLE``
paired samples on, the interval is the bootstrap's normal limit, computed directly.

The Overview, its verdict line and report, the header cards, Compare, the alerts and the
judge drift check all take their intervals from here. The delta is "beyond noise" when
the interval does not contain zero.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.stats import Z95

MIN_PAIRS = 5
"""Fewer paired samples than this give no verdict (the interval means nothing)."""

BOOTSTRAP_REPS = 2000
"""Resamples of the paired bootstrap."""

BOOTSTRAP_SEED = 20261101
"""Fixed so a page shows the same verdict on every rerun."""

LARGE_SAMPLE = 2000
"""From this many paired samples on, the interval is the bootstrap's large-sample limit
(the mean plus or minus ``Z95`` standard errors) instead of 2,000 resamples: the two agree to
within the resamples' own Monte-Carlo error there (``tests/engine/test_noise_limit.py``),
and the resamples would cost reps x n (0.08 s at n = 5,000; a 1M-result Overview runs one
per domain and metric)."""

METHOD = "bootstrap"
"""The method's short name, shown after an interval."""

METHOD_CAPTION = (
    "95% interval of the change by a paired bootstrap over samples: each sample's value is "
    "its mean over iterations, so repeats of the judge add their noise to the samples' "
    "rather than replace it"
)
"""How the intervals are computed, in the words every page's caption uses."""


@dataclass(frozen=True)
class NoiseCheck:
    """The verdict on one delta."""

    method: str
    """``bootstrap`` or ``none``."""
    low: float | None = None
    """Lower end of the 95% interval of the delta."""
    high: float | None = None
    """Upper end of the 95% interval of the delta."""
    note: str = ""
    """Why there is no verdict, when there is none."""
    pairs: int = 0
    """Paired samples the interval is computed on."""

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

    def short_label(self) -> str:
        """``label`` without the method, for a table whose caption names it."""
        if self.beyond_noise is None:
            return self.note or "no baseline"
        verdict = "beyond" if self.beyond_noise else "within"
        return f"{verdict} [{self.low:+.1f}, {self.high:+.1f}]"


def sample_deltas(current: dict[str, list[float]], baseline: dict[str, list[float]]) -> np.ndarray:
    """Paired per-sample deltas from each run's values per sample (one value per iteration
    and candidate): the mean of a sample's values in ``current`` minus its mean in
    ``baseline``, for the samples both runs have a value for. What the SQL queries that feed
    ``bootstrap_check`` compute in the warehouse; this is its form for values in memory."""
    out = [
        float(np.mean(current[s])) - float(np.mean(baseline[s]))
        for s in sorted(current.keys() & baseline.keys())
        if current[s] and baseline[s]
    ]
    return np.asarray(out, dtype=np.float64)


def bootstrap_check(
    deltas: np.ndarray, reps: int = BOOTSTRAP_REPS, seed: int = BOOTSTRAP_SEED
) -> NoiseCheck:
    """Percentile interval of the mean of paired per-sample ``deltas`` (NaNs dropped): one
    delta per sample, its iterations already averaged (``sample_deltas``)."""
    values = np.asarray(deltas, dtype=np.float64)
    values = values[~np.isnan(values)]
    n = values.size
    if n < MIN_PAIRS:
        return NoiseCheck("none", note=f"too few paired samples ({n})", pairs=n)
    if np.all(values == values[0]):
        # Every resample has the same mean: the interval is that one value.
        return NoiseCheck(METHOD, float(values[0]), float(values[0]), pairs=n)
    if n >= LARGE_SAMPLE:
        mean = float(values.mean())
        half = Z95 * float(values.std(ddof=1)) / float(np.sqrt(n))
        return NoiseCheck(METHOD, mean - half, mean + half, pairs=n)
    rng = np.random.default_rng(seed)
    means = np.empty(reps)
    # Blocks keep the index matrix small on large domains (reps x n int32 at most 64 MB).
    block = max(1, min(reps, 16_000_000 // n))
    for start in range(0, reps, block):
        stop = min(reps, start + block)
        idx = rng.integers(0, n, size=(stop - start, n), dtype=np.int32)
        means[start:stop] = values[idx].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return NoiseCheck(METHOD, float(low), float(high), pairs=n)
