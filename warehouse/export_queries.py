"""What `evalhouse export` reads.

Typed queries over ``sql/queries/<name>.sql``, registered in ``queries.QUERIES`` like
every named query and re-exported by ``warehouse.queries`` (pages call them as
``q.<name>``): a module of their own because ``queries`` is long enough."""

from __future__ import annotations

import polars as pl

from warehouse.reader import Warehouse, named_query


@named_query
def export_run(wh: Warehouse, run_id: str) -> pl.DataFrame:
    """The latest state of one run as ``evalhouse export`` needs it (name, test set, config)."""
    return wh.named("export_run", run_id=run_id)


@named_query
def export_samples(wh: Warehouse, run_id: str, candidate: str = "") -> pl.DataFrame:
    """The first iteration's samples of one candidate lane, with their scores."""
    return wh.named("export_samples", run_id=run_id, candidate=candidate)


@named_query
def export_claims(wh: Warehouse, run_id: str, candidate: str = "") -> pl.DataFrame:
    """The expected claims of those samples, in claim order."""
    return wh.named("export_claims", run_id=run_id, candidate=candidate)


@named_query
def run_candidates(wh: Warehouse, run_id: str) -> list[str]:
    """The candidate lanes of a run that have results (``''`` is the recorded/target lane)."""
    frame = wh.named("run_candidates", run_id=run_id)
    return [str(c) for c in frame["candidate"]]


@named_query
def preference_pairwise(wh: Warehouse, run_id: str) -> pl.DataFrame:
    """Decided, position-consistent head-to-head judgments involving a run or comparison,
    with the question and both answers (``export --format dpo``)."""
    return wh.named("preference_pairwise", run_id=run_id)


@named_query
def preference_reviews(wh: Warehouse, run_id: str) -> pl.DataFrame:
    """Pairs of reviewed answers to one question, the higher-graded first, one of them
    from the run (``export --format dpo``)."""
    return wh.named("preference_reviews", run_id=run_id)
