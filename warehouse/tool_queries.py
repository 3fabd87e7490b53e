"""Typed queries of agent tool-call metrics on the Overview (``sql/queries/domain_tool_
metrics.sql``, ``tool_sample_deltas_all.sql``): per domain the mean of each trajectory metric
of a run and its baseline, and the per-sample changes its noise interval resamples.
Registered in ``queries.QUERIES`` like every named query; a module of its own because
``queries`` is long enough."""

from __future__ import annotations

import polars as pl

from warehouse.queries import Filters, Warehouse, named_query


@named_query
def domain_tool_metrics(
    wh: Warehouse, run_id: str, baseline_run_id: str | None, filters: Filters
) -> pl.DataFrame:
    """Per domain and tool-call metric (0-100): mean, baseline mean and delta of a run's
    agent cases, under the Overview filters."""
    return wh.named(
        "domain_tool_metrics", run_id=run_id, baseline_run_id=baseline_run_id, **filters.params()
    )


@named_query
def tool_sample_deltas_all(
    wh: Warehouse, run_id: str, baseline_run_id: str, filters: Filters
) -> pl.DataFrame:
    """Per domain, tool-call metric and sample, the change (0-100) between two runs, paired
    by sample (ordered by domain, metric, sample)."""
    return wh.named(
        "tool_sample_deltas_all", run_id=run_id, baseline_run_id=baseline_run_id, **filters.params()
    )
