"""Human reviews: the queue, agreement with the judge, comments.

Typed queries over ``sql/queries/<name>.sql``, registered in ``queries.QUERIES`` like
every named query and re-exported by ``warehouse.queries`` (pages call them as
``q.<name>``): a module of their own because ``queries`` is long enough."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from warehouse.query_types import SampleRef
from warehouse.reader import Warehouse, named_query

REVIEW_QUEUE_LIMIT = 100
"""Samples the review queue lists at most."""

REVIEW_COMMENTS_LIMIT = 200
"""Reviewers' comments Judge agreement lists at most (the newest)."""


@named_query
def sample_reviews(wh: Warehouse, ref: SampleRef) -> pl.DataFrame:
    """Each reviewer's latest review of each item of one sample (view ``review_latest``)."""
    return wh.named("sample_reviews", **ref.params())


def _run_list(run_ids: Sequence[str] | None) -> list[str] | None:
    """A run filter as bound: None (every run) when empty."""
    return list(run_ids) if run_ids else None


@named_query
def reviewed_runs(wh: Warehouse) -> pl.DataFrame:
    """The runs with reviewed samples, newest first (the Judge agreement filter)."""
    return wh.named("reviewed_runs")


@named_query
def judge_agreement(wh: Warehouse, run_ids: Sequence[str] | None = None) -> pl.DataFrame:
    """Per judge and metric, agreement with people: Cohen's kappa and accuracy for labels,
    Pearson and Spearman for scores, all aggregated in SQL (view ``review_pairs``); over the
    reviews of ``run_ids`` (every run when None or empty)."""
    return wh.named("judge_agreement", run_ids=_run_list(run_ids))


@named_query
def agreement_confusion(wh: Warehouse, run_ids: Sequence[str] | None = None) -> pl.DataFrame:
    """Counts of (judge label, reviewer label) per judge and label metric (of ``run_ids``)."""
    return wh.named("agreement_confusion", run_ids=_run_list(run_ids))


@named_query
def review_queue(
    wh: Warehouse, limit: int = REVIEW_QUEUE_LIMIT, run_ids: Sequence[str] | None = None
) -> pl.DataFrame:
    """Reviewed samples where judge and reviewers disagree most, first (of ``run_ids``),
    each with its reviewers' comments (``comments``, newest first)."""
    return wh.named("review_queue", limit=limit, run_ids=_run_list(run_ids))


@named_query
def review_comments(
    wh: Warehouse, run_ids: Sequence[str] | None = None, limit: int = REVIEW_COMMENTS_LIMIT
) -> pl.DataFrame:
    """Every saved review that still counts and has a comment, newest first (of
    ``run_ids``), with how many of its labelled items disagree with evalhouse."""
    return wh.named("review_comments", run_ids=_run_list(run_ids), limit=limit)
