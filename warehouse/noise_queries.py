"""Typed queries behind the noise intervals that pages and ``check`` compute outside the
Overview's own queries: one metric's per-sample values in any set of runs, and the paired
changes between two of them. Registered in ``queries.QUERIES`` like every named query; a
module of its own because ``queries`` is long enough."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

import numpy as np
import polars as pl

from engine.noise import NoiseCheck, bootstrap_check
from warehouse.queries import Warehouse, named_query


@named_query
def metric_sample_values(
    wh: Warehouse, run_ids: Sequence[str], metric: str, candidate: str | None = None
) -> pl.DataFrame:
    """run_id, domain, sample_id and ``metric``'s value (0-100, the mean over the sample's
    iterations) of every sample of ``run_ids`` that has one."""
    return wh.named(
        "metric_sample_values", run_ids=list(run_ids), metric=metric, candidate=candidate
    )


@named_query
def shared_case_ids(wh: Warehouse, run_id: str, baseline_run_id: str) -> list[str]:
    """The case ids both runs scored with the same content."""
    frame = wh.named("shared_case_ids", run_id=run_id, baseline_run_id=baseline_run_id)
    return [str(s) for s in frame["sample_id"]]


def paired_change(values: pl.DataFrame, run_id: str, baseline_run_id: str) -> NoiseCheck:
    """The paired bootstrap of ``run_id`` minus ``baseline_run_id`` over the samples both
    have a value for (``values``: rows of ``metric_sample_values``)."""
    return bootstrap_check(paired_deltas(values, run_id, baseline_run_id))


def paired_deltas(values: pl.DataFrame, run_id: str, baseline_run_id: str) -> np.ndarray:
    """Per sample in both runs, its value in ``run_id`` minus its value in the baseline."""
    current = values.filter(pl.col("run_id") == run_id).select("sample_id", "value")
    base = values.filter(pl.col("run_id") == baseline_run_id).select("sample_id", "value")
    joined = current.join(base, on="sample_id", suffix="_base")
    return (joined["value"] - joined["value_base"]).cast(pl.Float64).to_numpy()


def series_steps(values: pl.DataFrame, run_ids: Sequence[str]) -> pl.DataFrame:
    """Each run's step from the run before it in ``run_ids`` (oldest first), per domain, from
    ``metric_sample_values`` rows: run_id, domain, step (the mean paired change, 0-100),
    step_low, step_high (its 95% interval), step_beyond (None without an interval) and
    step_label."""
    rows: list[dict[str, object]] = []
    for (domain,), part in values.partition_by("domain", as_dict=True).items():
        for previous, run_id in pairwise(run_ids):
            deltas = paired_deltas(part, run_id, previous)
            if not deltas.size:
                continue
            check = bootstrap_check(deltas)
            rows.append(
                {
                    "run_id": run_id,
                    "domain": domain,
                    "step": float(deltas.mean()),
                    "step_low": check.low,
                    "step_high": check.high,
                    "step_beyond": check.beyond_noise,
                    "step_label": f"{float(deltas.mean()):+.1f}, {check.short_label()}",
                }
            )
    schema = {
        "run_id": pl.String,
        "domain": pl.String,
        "step": pl.Float64,
        "step_low": pl.Float64,
        "step_high": pl.Float64,
        "step_beyond": pl.Boolean,
        "step_label": pl.String,
    }
    return pl.DataFrame(rows, schema=schema)


def domain_changes(values: pl.DataFrame, run_id: str, baseline_run_id: str) -> pl.DataFrame:
    """Per domain of ``run_id``: the mean paired change against the baseline (0-100) and its
    95% interval, from ``metric_sample_values`` rows of both runs: domain, change,
    change_low, change_high, change_beyond (None without an interval), change_label."""
    current = values.filter(pl.col("run_id") == run_id).select("domain", "sample_id", "value")
    base = values.filter(pl.col("run_id") == baseline_run_id).select("sample_id", "value")
    paired = current.join(base, on="sample_id", suffix="_base").with_columns(
        delta=pl.col("value") - pl.col("value_base")
    )
    rows: list[dict[str, object]] = []
    for (domain,), part in paired.partition_by("domain", as_dict=True).items():
        deltas = part["delta"].cast(pl.Float64).to_numpy()
        check = bootstrap_check(deltas)
        mean = float(deltas.mean())
        rows.append(
            {
                "domain": domain,
                "change": mean,
                "change_low": check.low,
                "change_high": check.high,
                "change_beyond": check.beyond_noise,
                "change_label": check.short_label(),
            }
        )
    schema = {
        "domain": pl.String,
        "change": pl.Float64,
        "change_low": pl.Float64,
        "change_high": pl.Float64,
        "change_beyond": pl.Boolean,
        "change_label": pl.String,
    }
    return pl.DataFrame(rows, schema=schema).sort("domain")
