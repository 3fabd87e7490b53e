"""From ``LARGE_SAMPLE`` paired samples on, the noise interval is the bootstrap's normal
limit: on the kinds of deltas pages see (continuous, mostly unchanged with a few large
drops, pass/fail flips) it agrees with 2,000 paired-bootstrap resamples to within their own
Monte-Carlo error, and gives the same verdict."""

from __future__ import annotations

import numpy as np
import pytest

from engine import noise
from engine.noise import LARGE_SAMPLE, bootstrap_check


def _resampled(values: np.ndarray, reps: int = 2000) -> tuple[float, float]:
    rng = np.random.default_rng(noise.BOOTSTRAP_SEED)
    idx = rng.integers(0, values.size, size=(reps, values.size), dtype=np.int32)
    low, high = np.percentile(values[idx].mean(axis=1), [2.5, 97.5])
    return float(low), float(high)


def _cases(n: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(11)
    sparse = np.zeros(n)
    sparse[: n // 200] = -12.0  # 0.5% of answers lost 12 points
    flips = rng.choice([-100.0, 0.0, 0.0, 0.0, 100.0], size=n)  # pass/fail flips
    return {"continuous": rng.normal(-0.5, 15, n), "sparse drops": sparse, "flips": flips}


@pytest.mark.parametrize("n", [LARGE_SAMPLE, 5 * LARGE_SAMPLE])
def test_the_limit_matches_the_resamples(n: int) -> None:
    for name, values in _cases(n).items():
        check = bootstrap_check(values)
        assert check.low is not None and check.high is not None
        low, high = _resampled(values)
        width = high - low
        # Monte-Carlo error of a 2.5% percentile from 2,000 resamples is a few % of the width
        assert abs(check.low - low) < 0.08 * width, (name, check.low, low)
        assert abs(check.high - high) < 0.08 * width, (name, check.high, high)
        assert check.beyond_noise == (low > 0 or high < 0), name


def test_below_the_limit_the_resamples_decide() -> None:
    values = _cases(LARGE_SAMPLE - 1)["sparse drops"]
    check = bootstrap_check(values)
    assert (check.low, check.high) == pytest.approx(_resampled(values))
