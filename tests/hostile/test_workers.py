"""``--workers`` cannot start more processes than the run can use: it is bounded by one per
64 samples and by the usable cores, with a one-line warning, unless ``--force-workers``;
an absurd count is refused in one line before anything runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import engine.run.loop
from engine.models import RunConfig
from engine.run.pool import usable_cores, worker_bound, worker_count
from engine.settings import Paths
from tests.hostile.conftest import GOOD_CASE, assert_refused, cli, fingerprint


@pytest.fixture
def three(tmp_path: Path) -> Path:
    path = tmp_path / "three.jsonl"
    path.write_text(
        "".join(GOOD_CASE.replace('"q1"', f'"q{i}"') + "\n" for i in range(3)), encoding="utf-8"
    )
    return path


def test_six_workers_on_three_samples_start_none_and_say_why(
    three: Path, home: Paths, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[Any] = []
    real = engine.run.loop.start_pool

    def watched(*args: Any, **kwargs: Any) -> Any:
        pool = real(*args, **kwargs)
        started.append(pool)
        return pool

    monkeypatch.setattr(engine.run.loop, "start_pool", watched)
    outcome = cli(
        capsys, "run", "--test-set", str(three), "--name", "w", "--workers", "6",
        "--home", str(home.home), "--no-ingest",
    )  # fmt: skip
    assert outcome.code == 0 and "Traceback" not in outcome.err, outcome.err
    warnings = [line for line in outcome.err_lines if line.startswith("--workers 6:")]
    assert warnings == [
        f"--workers 6: 3 sample(s) on {usable_cores()} usable core(s) use at most 1; "
        "starting 1 (--force-workers keeps 6)"
    ]
    assert started == [None]  # scored in the run's own process: no worker started


@pytest.mark.parametrize("extra", [(), ("--force-workers",)])
def test_an_absurd_count_is_refused_forced_or_not(
    extra: tuple[str, ...], three: Path, seeded: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    before = fingerprint(seeded)
    outcome = cli(
        capsys, "run", "--test-set", str(three), "--name", "w", "--workers", "256", *extra,
        "--home", str(seeded.home),
    )  # fmt: skip
    assert "less than or equal to 64" in assert_refused(outcome, mentions="--workers 256")
    assert fingerprint(seeded) == before


def test_forcing_keeps_the_count_and_warns_nothing(
    three: Path, home: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    outcome = cli(
        capsys, "run", "--test-set", str(three), "--name", "w", "--workers", "1",
        "--force-workers", "--home", str(home.home), "--no-ingest",
    )  # fmt: skip
    assert outcome.code == 0 and not any("--workers" in line for line in outcome.err_lines)
    config = RunConfig(name="n", test_set="t.jsonl", workers=6, force_workers=True)
    assert worker_count(config, 3) == 6


@pytest.mark.parametrize(("samples", "bound"), [(1, 1), (64, 1), (65, 2), (10**6, usable_cores())])
def test_the_bound_is_samples_over_64_rounded_up_and_the_cores(samples: int, bound: int) -> None:
    assert worker_bound(samples) == min(bound, usable_cores())
