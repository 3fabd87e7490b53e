"""`evalhouse check --baseline` gives each regression metric's change with the one noise
interval the pages show (paired bootstrap over samples, iterations kept together), and
`--fail-beyond-noise` gates on it: a one-answer change passes at any number of iterations,
a real 10-point drop on 300 samples fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalhouse.cli import main
from tests.noise_cases import noise_home, ten_point_drop, twelve_cases


def _check(root: Path, *args: str) -> int:
    return main(["check", "cand", "--baseline", "base", *args, "--home", str(root)])


@pytest.mark.parametrize("iterations", [1, 2, 5])
def test_one_changed_answer_is_within_noise(
    tmp_path: Path, iterations: int, capsys: pytest.CaptureFixture[str]
) -> None:
    home = noise_home(tmp_path / "home", twelve_cases(iterations))
    code = _check(
        home.home, "--regression-metric", "accuracy", "--fail-beyond-noise", "--tolerance", "20"
    )
    out = capsys.readouterr().out
    assert code == 0, out
    # 12 paired samples, one down 12 points: mean -1.0, and resamples without it reach 0.
    assert "ok    accuracy not worse beyond noise" in out
    line = next(x for x in out.splitlines() if x.strip().startswith("accuracy  "))
    assert "-1.0 points, within noise [" in line and "on 12 paired samples" in line
    assert "paired bootstrap over samples" in out


@pytest.mark.parametrize(("iterations", "judge_sd"), [(1, 0.0), (5, 8.0)])
def test_a_ten_point_drop_fails_beyond_noise(
    tmp_path: Path, iterations: int, judge_sd: float, capsys: pytest.CaptureFixture[str]
) -> None:
    home = noise_home(tmp_path / "home", ten_point_drop(iterations, judge_sd))
    code = _check(
        home.home,
        "--regression-metric",
        "accuracy",
        "--fail-beyond-noise",
        "--max-regressions",
        "300",
    )
    out = capsys.readouterr().out
    assert code == 1, out
    assert "FAIL  accuracy not worse beyond noise" in out
    assert "beyond noise [" in out and "on 300 paired samples" in out


def test_without_the_flag_the_interval_is_reported_not_gated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = noise_home(tmp_path / "home", ten_point_drop(1, 0.0))
    assert _check(home.home, "--regression-metric", "accuracy", "--max-regressions", "300") == 0
    out = capsys.readouterr().out
    assert "not worse beyond noise" not in out
    assert "accuracy  " in out and "beyond noise [" in out


def test_the_flag_needs_a_baseline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", "cand", "--fail-beyond-noise", "--home", str(tmp_path)])
    assert code == 2
    assert "--fail-beyond-noise needs --baseline" in capsys.readouterr().err
