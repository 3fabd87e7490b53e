"""Warehouses for the noise interval's tests, built through the lake and ingest: twelve
cases with one answer changed, and a real 10-point drop on 300 samples, at any number of
iterations."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.lake import write_part
from engine.models import ResultRecord
from engine.settings import Paths, resolve_paths
from ingest import ingest
from tests.factories import T0, result_record, run_record

Scores = dict[str, list[float]]
"""Per sample id, its accuracy in each iteration."""


def noise_home(
    root: Path, runs: dict[str, tuple[str, Scores]], *, series: str | None = None
) -> Paths:
    """A warehouse with one run per entry, a day apart: run id -> (domain of each sample's
    prefix, scores); with ``series`` every run has that name (one series)."""
    paths = resolve_paths(root)
    for n, (run_id, (_, scores)) in enumerate(runs.items()):
        iterations = max(len(v) for v in scores.values())
        named = {"name": series} if series else {}
        run = run_record(run_id, T0.replace(day=1 + n), **named)
        write_part(paths.lake, "runs", run_id, 0, [run])
        for iteration in range(1, iterations + 1):
            rows: list[ResultRecord] = [
                result_record(
                    run_id,
                    sample_id,
                    iteration=iteration,
                    domain=sample_id.split("-")[0] + ".example",
                    accuracy=values[iteration - 1],
                )
                for sample_id, values in scores.items()
            ]
            write_part(paths.lake, "results", run_id, iteration, rows)
    ingest(paths)
    return paths


def twelve_cases(iterations: int) -> dict[str, tuple[str, Scores]]:
    """Twelve cases (eight acme, four beta), one acme answer changed (accuracy 60 -> 48):
    the local judge gives the same score on every repeat."""
    base = {f"acme-{i}": 60.0 + i for i in range(8)} | {f"beta-{i}": 70.0 for i in range(4)}
    cand = dict(base, **{"acme-3": 63.0 - 12})
    return {
        "base": ("", {s: [v] * iterations for s, v in base.items()}),
        "cand": ("", {s: [v] * iterations for s, v in cand.items()}),
    }


def ten_point_drop(iterations: int, judge_sd: float) -> dict[str, tuple[str, Scores]]:
    """300 samples; the candidate loses 10 points on average (each sample's own change
    varies, sd 15), and each repeat of the judge adds its own noise (sd ``judge_sd``)."""
    rng = np.random.default_rng(7)
    truth = rng.uniform(30, 90, 300)
    change = -10 + rng.normal(0, 15, 300)

    def scores(centre: np.ndarray) -> Scores:
        noisy = centre[:, None] + rng.normal(0, judge_sd, (300, iterations))
        return {f"acme-{i}": list(np.clip(noisy[i], 0, 100)) for i in range(300)}

    return {"base": ("", scores(truth)), "cand": ("", scores(truth + change))}
