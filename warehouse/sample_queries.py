"""The Sample page and its finder.

Typed queries over ``sql/queries/<name>.sql``, registered in ``queries.QUERIES`` like
every named query and re-exported by ``warehouse.queries`` (pages call them as
``q.<name>``): a module of their own because ``queries`` is long enough."""

from __future__ import annotations

import json
from typing import Any

import polars as pl

from engine.models import ANALYZER_METRICS
from warehouse.query_types import PAGE_SIZE, SampleRef
from warehouse.reader import Warehouse, named_query


@named_query
def run_samples(
    wh: Warehouse,
    run_id: str,
    *,
    domain: str | None = None,
    search: str | None = None,
    outcome: str | None = None,
    flag: str | None = None,
    metric: str | None = None,
    low: float = 0.0,
    high: float = 100.0,
    limit: int = PAGE_SIZE,
    offset: int = 0,
) -> pl.DataFrame:
    """One page of a run's result rows, with ``total_rows`` for the pager, filtered (see the
    SQL file) by domain, text (id, query, response, expected claims), rubric outcome, flag
    and a metric's range."""
    if outcome not in (None, "passed", "failed", "error"):
        raise ValueError(f"unknown outcome {outcome!r}")
    if metric is not None and metric not in SAMPLE_FILTER_METRICS:
        raise ValueError(f"unknown metric {metric!r}")
    return wh.named(
        "run_samples",
        run_id=run_id,
        domain=domain,
        search=search or None,
        outcome=outcome,
        flag=flag,
        metric=metric,
        low=low,
        high=high,
        limit=limit,
        offset=offset,
    )


SAMPLE_FILTER_METRICS = ANALYZER_METRICS
"""Metrics the Sample page's finder filters by range, all 0-100 (``run_samples.sql``)."""


@named_query
def run_flags(wh: Warehouse, run_id: str) -> pl.DataFrame:
    """flag, rows: the review flags a run's rows carry."""
    return wh.named("run_flags", run_id=run_id)


@named_query
def sample_versions(wh: Warehouse, run_id: str, sample_id: str) -> pl.DataFrame:
    """The (iteration, candidate) pairs one sample of a run was scored in."""
    return wh.named("sample_versions", run_id=run_id, sample_id=sample_id)


@named_query
def export_cases(wh: Warehouse, run_id: str) -> dict[str, str]:
    """``sample_id -> case JSON`` of every case ``run_id`` kept (empty for runs of versions
    that kept none)."""
    frame = wh.named("export_cases", run_id=run_id)
    return {str(sid): str(case) for sid, case in frame.iter_rows()}


@named_query
def sample_case(wh: Warehouse, run_id: str, sample_id: str) -> dict[str, Any] | None:
    """The test case ``run_id`` scored as ``sample_id`` (native format, decoded), or None
    when the run did not keep its cases."""
    frame = wh.named("sample_case", run_id=run_id, sample_id=sample_id)
    if frame.is_empty():
        return None
    case: dict[str, Any] = json.loads(str(frame["case_json"][0]))
    return case


@named_query
def sample_result(wh: Warehouse, ref: SampleRef) -> pl.DataFrame:
    """The results row of one sample (empty when unknown)."""
    return wh.named("sample_result", **ref.params())


@named_query
def sample_highlights(wh: Warehouse, ref: SampleRef) -> pl.DataFrame:
    """Response spans of a sample and the ground-truth passages they match."""
    return wh.named("sample_highlights", **ref.params())


@named_query
def sample_claims(wh: Warehouse, ref: SampleRef) -> pl.DataFrame:
    """Expected claims of a sample, found or missing, with evidence."""
    return wh.named("sample_claims", **ref.params())


@named_query
def sample_attributions(wh: Warehouse, ref: SampleRef) -> pl.DataFrame:
    """URL, domain and brand mentions in a sample's response."""
    return wh.named("sample_attributions", **ref.params())


@named_query
def sample_verdicts(wh: Warehouse, ref: SampleRef) -> pl.DataFrame:
    """Verdicts on the claims of a sample's response."""
    return wh.named("sample_verdicts", **ref.params())


@named_query
def sample_graders(wh: Warehouse, ref: SampleRef) -> pl.DataFrame:
    """Grader scores of a sample's output."""
    return wh.named("sample_graders", **ref.params())


@named_query
def sample_retrieval(wh: Warehouse, ref: SampleRef) -> pl.DataFrame:
    """Where each ground-truth passage of a sample was retrieved: passage, rank (null: not
    retrieved), matched_by, reason; empty when the sample has no retrieval metrics."""
    return wh.named("sample_retrieval", **ref.params())


@named_query
def run_low_faithfulness(wh: Warehouse, run_id: str) -> pl.DataFrame:
    """Per iteration and candidate of a run: the judge means and the stored low-faithfulness
    analysis (``low_faithfulness`` JSON: categories, examples, insight)."""
    return wh.named("run_low_faithfulness", run_id=run_id)
