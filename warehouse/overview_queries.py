"""The Overview's per-domain metrics, distributions and deltas.

Typed queries over ``sql/queries/<name>.sql``, registered in ``queries.QUERIES`` like
every named query and re-exported by ``warehouse.queries`` (pages call them as
``q.<name>``): a module of their own because ``queries`` is long enough."""

from __future__ import annotations

import polars as pl

from engine.models.metrics import GRADER_PREFIX
from warehouse.query_types import Filters
from warehouse.reader import Warehouse, named_query


@named_query
def run_filters(wh: Warehouse, run_id: str) -> dict[str, list[str]]:
    """Values offered by the filters of a run: ``provider``, ``tag``, ``candidate``, ``domain``."""
    frame = wh.named("run_filters", run_id=run_id)
    out: dict[str, list[str]] = {"provider": [], "tag": [], "candidate": [], "domain": []}
    for kind, value in frame.iter_rows():
        if value is not None:
            out[str(kind)].append(str(value))
    return out


@named_query
def domain_metrics(
    wh: Warehouse, run_id: str, baseline_run_id: str | None, filters: Filters
) -> pl.DataFrame:
    """Per-domain means, baseline means, deltas and per-iteration spreads of a run."""
    return wh.named(
        "domain_metrics", run_id=run_id, baseline_run_id=baseline_run_id, **filters.params()
    )


@named_query
def tier_distribution(wh: Warehouse, run_id: str, filters: Filters) -> pl.DataFrame:
    """Result rows per (domain, metric, tier) of a run under the filters."""
    return wh.named("tier_distribution", run_id=run_id, **filters.params())


@named_query
def sample_deltas(
    wh: Warehouse, run_id: str, baseline_run_id: str, domain: str, filters: Filters
) -> pl.DataFrame:
    """Per-sample metric deltas of one domain between two runs (paired by sample id)."""
    return wh.named(
        "sample_deltas",
        run_id=run_id,
        baseline_run_id=baseline_run_id,
        domain=domain,
        **filters.params(),
    )


@named_query
def sample_deltas_all(
    wh: Warehouse, run_id: str, baseline_run_id: str, filters: Filters
) -> pl.DataFrame:
    """``sample_deltas`` of every domain at once, with a ``domain`` column (ordered by domain,
    then sample): one query for all of the Overview's noise checks."""
    return wh.named(
        "sample_deltas_all", run_id=run_id, baseline_run_id=baseline_run_id, **filters.params()
    )


@named_query
def domain_grader_metrics(
    wh: Warehouse, run_id: str, baseline_run_id: str | None, filters: Filters
) -> pl.DataFrame:
    """Per domain and grader: mean score (0-100), baseline mean, delta and per-iteration
    spreads of a run, under the Overview filters."""
    return wh.named(
        "domain_grader_metrics",
        run_id=run_id,
        baseline_run_id=baseline_run_id,
        **filters.params(),
    )


@named_query
def grader_sample_deltas(
    wh: Warehouse, run_id: str, baseline_run_id: str, domain: str, filters: Filters
) -> pl.DataFrame:
    """Per-sample grader deltas (0-100) of one domain between two runs, paired by sample."""
    return wh.named(
        "grader_sample_deltas",
        run_id=run_id,
        baseline_run_id=baseline_run_id,
        domain=domain,
        **filters.params(),
    )


@named_query
def grader_sample_deltas_all(
    wh: Warehouse, run_id: str, baseline_run_id: str, filters: Filters
) -> pl.DataFrame:
    """``grader_sample_deltas`` of every domain at once, with a ``domain`` column (ordered by
    domain, grader, sample)."""
    return wh.named(
        "grader_sample_deltas_all",
        run_id=run_id,
        baseline_run_id=baseline_run_id,
        **filters.params(),
    )


@named_query
def domain_retrieval_metrics(
    wh: Warehouse, run_id: str, baseline_run_id: str | None, filters: Filters
) -> pl.DataFrame:
    """Per domain and retrieval metric: mean (0-100), baseline mean, delta and
    per-iteration spreads of a run, under the Overview filters."""
    return wh.named(
        "domain_retrieval_metrics",
        run_id=run_id,
        baseline_run_id=baseline_run_id,
        **filters.params(),
    )


@named_query
def retrieval_sample_deltas_all(
    wh: Warehouse, run_id: str, baseline_run_id: str, filters: Filters
) -> pl.DataFrame:
    """Per domain, retrieval metric and sample, the change (0-100) between two runs, paired
    by sample (ordered by domain, metric, sample)."""
    return wh.named(
        "retrieval_sample_deltas_all",
        run_id=run_id,
        baseline_run_id=baseline_run_id,
        **filters.params(),
    )


@named_query
def run_graders(wh: Warehouse, run_ids: tuple[str, ...]) -> list[str]:
    """The graders that scored any of ``run_ids``, as metric names (``grader:<id>``)."""
    frame = wh.named("run_graders", run_ids=list(run_ids))
    return [f"{GRADER_PREFIX}{g}" for g in frame["grader"]]
