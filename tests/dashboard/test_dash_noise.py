"""The one noise interval (paired bootstrap over samples, iterations kept together) on real
warehouses built through the lake and ingest: a one-answer change stays within noise
however many times a deterministic judge repeated itself, and a real 10-point drop on 300
samples is beyond noise with one iteration or five noisy ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from dashboard import data
from dashboard.verdict import domain_verdict
from engine.noise import bootstrap_check, sample_deltas
from tests.noise_cases import noise_home, ten_point_drop, twelve_cases
from warehouse.queries import METRIC_LABELS, Filters, Warehouse


@pytest.mark.parametrize("iterations", [1, 2, 5])
def test_one_changed_answer_is_within_noise_at_any_iteration_count(
    tmp_path: Path, iterations: int
) -> None:
    paths = noise_home(tmp_path / "home", twelve_cases(iterations))
    frame = data.overview(Warehouse(paths.warehouse), "cand", "base", Filters())
    acme = frame.filter(domain="acme.example").row(0, named=True)
    assert acme["accuracy_delta"] == pytest.approx(-1.5)  # -12 / 8 samples
    # 7 of 8 paired deltas are 0: a resample without the changed answer (34% of them)
    # has mean 0, so the interval reaches zero.
    assert acme["accuracy_beyond_noise"] is False
    assert acme["accuracy_high"] == pytest.approx(0.0)
    # The changed answer drawn 3 times or more in 8 draws: 6.7% of resamples, 4 or more
    # 1.1%, so the 2.5th percentile is 3 draws: 3 x -12 / 8.
    assert acme["accuracy_low"] == pytest.approx(-4.5)
    assert acme["accuracy_noise"].startswith("within [-4.5, +0.0]")
    verdict = domain_verdict(frame, dict(METRIC_LABELS), True)
    assert verdict.headline() == "No domain changed beyond noise (2 compared)."


def test_identical_repeats_give_the_one_iteration_interval(tmp_path: Path) -> None:
    bounds = []
    for iterations in (1, 5):
        paths = noise_home(tmp_path / f"h{iterations}", twelve_cases(iterations))
        row = data.overview(Warehouse(paths.warehouse), "cand", "base", Filters()).row(
            0, named=True
        )
        bounds.append((row["accuracy_low"], row["accuracy_high"]))
    assert bounds[0] == bounds[1]


@pytest.mark.parametrize(("iterations", "judge_sd"), [(1, 0.0), (5, 8.0)])
def test_a_ten_point_drop_on_300_samples_is_beyond_noise(
    tmp_path: Path, iterations: int, judge_sd: float
) -> None:
    runs = ten_point_drop(iterations, judge_sd)
    paths = noise_home(tmp_path / "home", runs)
    frame = data.overview(Warehouse(paths.warehouse), "cand", "base", Filters())
    row = frame.row(0, named=True)
    assert row["accuracy_delta"] == pytest.approx(-10, abs=2.5)
    assert row["accuracy_beyond_noise"] is True
    assert row["accuracy_high"] < 0
    # The same interval as the engine's bootstrap over the per-sample means, by hand.
    by_hand = bootstrap_check(sample_deltas(runs["cand"][1], runs["base"][1]))
    assert (row["accuracy_low"], row["accuracy_high"]) == pytest.approx((by_hand.low, by_hand.high))
    verdict = domain_verdict(frame, dict(METRIC_LABELS), True)
    assert verdict.headline().startswith("1 of 1 domain worse beyond noise (acme.example)")


def test_judge_noise_widens_never_narrows_the_interval() -> None:
    """Judge variance adds to the sample variance: the same samples with noisy repeats
    give a wider interval than with exact ones (sd of a sample's mean grows)."""
    exact = ten_point_drop(1, 0.0)
    noisy = ten_point_drop(1, 20.0)
    a = bootstrap_check(sample_deltas(exact["cand"][1], exact["base"][1]))
    b = bootstrap_check(sample_deltas(noisy["cand"][1], noisy["base"][1]))
    assert a.low is not None and a.high is not None and b.low is not None and b.high is not None
    assert b.high - b.low > a.high - a.low
