"""The queries of ``evalhouse check`` (the CI gate): whether a run exists, its gateable
metrics, required claims, grader errors and worst samples."""

from __future__ import annotations

import polars as pl

from warehouse.reader import Warehouse, named_query


@named_query
def run_exists(wh: Warehouse, run_id: str) -> bool:
    """Whether the warehouse knows the run."""
    return bool(wh.named("run_exists", run_id=run_id)["known"][0])


@named_query
def check_metrics(
    wh: Warehouse, run_id: str, candidate: str | None = None
) -> dict[str, float | None]:
    """Every gateable metric of a run on its own scale (``engine.models.metrics``): means of
    the analyzer, judge and RAG metrics, pass and error rates, cost and result rows,
    ``conversation:<metric>`` when it has conversations, ``grader:<id>`` for each grader
    and ``retrieval:<metric>`` for each retrieval metric."""
    frame = wh.named("check_metrics", run_id=run_id, candidate=candidate)
    return {str(m): (None if v is None else float(v)) for m, v in frame.iter_rows()}


@named_query
def required_claims_missing(
    wh: Warehouse, run_id: str, candidate: str | None = None
) -> tuple[int, int]:
    """(result rows missing a required claim, result rows with a required claim) of a run:
    what ``check --require-all-required`` gates on."""
    frame = wh.named("required_claims_missing", run_id=run_id, candidate=candidate)
    missing, total = frame.row(0) if frame.height else (0, 0)
    return int(missing or 0), int(total or 0)


@named_query
def grader_errors(
    wh: Warehouse, run_id: str, candidate: str | None = None
) -> list[tuple[str, int, int]]:
    """(grader, results, errors) of every grader of a run, from the view grader_summary."""
    frame = wh.named("grader_errors", run_id=run_id, candidate=candidate)
    return [(str(g), int(n), int(e)) for g, n, e in frame.iter_rows()]


@named_query
def check_worst_samples(
    wh: Warehouse, run_id: str, candidate: str | None = None, limit: int = 5
) -> pl.DataFrame:
    """The ``limit`` worst samples of a run for ``check``'s summary: per sample and
    candidate its errors, grader failures, rubric failures, mean accuracy (0-100) and mean
    grader score (0-1), worst first, with the first error or grader failure as ``why``."""
    return wh.named("check_worst_samples", run_id=run_id, candidate=candidate, limit=limit)
