"""Typed queries of judge drift (``sql/queries/drift_*.sql``, ``judge_*.sql``): a run's
series and judges, a series' runs, the runs whose judge changed, and a run's observed change
beside its judge drift; and every run's series (the Overview's series picker). Registered in
``queries.QUERIES`` like every named query; a module of its own because ``queries`` is long
enough."""

from __future__ import annotations

from typing import TypedDict

import polars as pl

from warehouse.queries import Warehouse, named_query


class RunJudges(TypedDict):
    """A run's series, baseline and both judges (``judge@prompt version``)."""

    series: str
    baseline_run_id: str | None
    judge: str
    baseline_judge: str | None


@named_query
def drift_run_series(wh: Warehouse, run_id: str) -> RunJudges | None:
    """The series, baseline and judges of ``run_id``; None when the warehouse lacks it."""
    frame = wh.named("drift_run_series", run_id=run_id)
    if frame.is_empty():
        return None
    row = frame.row(0, named=True)
    return RunJudges(
        series=str(row["series"]),
        baseline_run_id=row["baseline_run_id"],
        judge=str(row["judge"]),
        baseline_judge=row["baseline_judge"],
    )


@named_query
def drift_series_runs(wh: Warehouse, series: str) -> pl.DataFrame:
    """The runs of ``series``, newest first, with status, baseline and judge."""
    return wh.named("drift_series_runs", series=series)


@named_query
def judge_changes(wh: Warehouse) -> pl.DataFrame:
    """Every run whose judge differs from its baseline's (the events Trends marks)."""
    return wh.named("judge_changes")


@named_query
def judge_drift_split(wh: Warehouse, run_id: str, baseline_run_id: str) -> pl.DataFrame:
    """Per judge metric: the observed change of ``run_id`` against ``baseline_run_id`` (0-100)
    and the judge drift its latest check measured (empty without a check)."""
    return wh.named("judge_drift_split", run_id=run_id, baseline_run_id=baseline_run_id)


@named_query
def series_runs_all(wh: Warehouse) -> pl.DataFrame:
    """Every run's series and default baseline (run_id, series, baseline_run_id)."""
    return wh.named("series_runs_all")
