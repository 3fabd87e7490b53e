"""Typed queries of judge reliability and reviewer agreement (``sql/queries/judge_*``,
``jury_agreement``, ``reviewer_units``): the runs that asked their judges again, flip
rates, a jury's agreement, the asks and the twice-reviewed items as units for
Krippendorff's alpha, and a judge's calibration against people. Registered in
``queries.QUERIES`` like every named query; a module of its own because ``queries`` is
long enough."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from warehouse.queries import Warehouse, named_query


def _runs(run_ids: Sequence[str] | None) -> list[str] | None:
    return list(run_ids) if run_ids else None


@named_query
def judge_reliability_runs(wh: Warehouse) -> pl.DataFrame:
    """Runs with asks in ``judge_asks`` (repeats, iterations or a jury), newest first."""
    return wh.named("judge_reliability_runs")


@named_query
def judge_reliability(wh: Warehouse, run_id: str) -> pl.DataFrame:
    """Per judge and metric of ``run_id``: flip rate and spread across asks."""
    return wh.named("judge_reliability", run_id=run_id)


@named_query
def jury_agreement(wh: Warehouse, run_id: str) -> pl.DataFrame:
    """Per judge and metric of a jury run: agreement with the other judges and mean gap."""
    return wh.named("jury_agreement", run_id=run_id)


@named_query
def judge_ask_values(wh: Warehouse, run_id: str) -> pl.DataFrame:
    """Every ask's 0-100 value of ``run_id`` by judge, metric and unit (an answer)."""
    return wh.named("judge_ask_values", run_id=run_id)


@named_query
def reviewer_units(wh: Warehouse, run_ids: Sequence[str] | None = None) -> pl.DataFrame:
    """Items two or more people reviewed, one row per (item, reviewer) with its value."""
    return wh.named("reviewer_units", run_ids=_runs(run_ids))


@named_query
def judge_calibration(
    wh: Warehouse, metric: str = "judge_overall", run_ids: Sequence[str] | None = None
) -> pl.DataFrame:
    """Per judge and score bin of ``metric``: the reviewers' share correct."""
    return wh.named("judge_calibration", metric=metric, run_ids=_runs(run_ids))
