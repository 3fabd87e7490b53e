"""Typed query functions: one per named SQL file, each returning polars (or a small value).

``Warehouse`` (``warehouse.reader``, re-exported here) is the connection facade. Every
named query is one module-level function
``fn(wh, ...)`` over ``sql/queries/<fn name>.sql``, registered in ``QUERIES`` so the
dashboard can cache any of them through one call keyed on (warehouse, data version,
query name, parameters). The CLI (``evalhouse check``), the dashboard and tests call these
functions; nobody else writes SQL against the warehouse (except analysts, through
``evalhouse sql`` and the SQL page, sandboxed by ``db.read_connection``). Values are
always bound as ``$name`` parameters, never formatted into the SQL text. Aggregation
happens in SQL; per-row details come one page at a time (``limit`` / ``offset``).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, TypedDict, cast

import polars as pl
from pydantic import ValidationError

from engine.models import ANALYZER_METRICS, TierThresholds

# Re-exported: the pages find the prefixes beside the metric list.
from engine.models.metrics import (
    GRADER_PREFIX as GRADER_PREFIX,
    JUDGE_METRICS,
    METRICS as METRIC_CATALOGUE,
    RETRIEVAL_PREFIX as RETRIEVAL_PREFIX,
    TOOL_LABELS,
    TOOLS_PREFIX as TOOLS_PREFIX,
)
from warehouse.query_types import PAGE_SIZE as PAGE_SIZE, Filters as Filters, SampleRef as SampleRef
from warehouse.reader import (
    QUERIES as QUERIES,
    Warehouse as Warehouse,
    named_query as named_query,
    sql_file as sql_file,
)

METRICS = ANALYZER_METRICS
"""The analyzer metrics (0-100) the Overview table shows."""

METRIC_LABELS = {name: METRIC_CATALOGUE[name].label for name in (*ANALYZER_METRICS, *JUDGE_METRICS)}
"""Every metric Trends and Compare offer, with its human name (``engine.models.metrics``).
Pages show each in its 0-100 form (view ``result_scores``, columns ``<metric>_100`` for
the ones not on 0-100 already), so that metrics of different scales share one axis."""

ALL_METRICS = tuple(METRIC_LABELS)
"""The names of ``METRIC_LABELS``."""

EXTRA_PREFIXES = (GRADER_PREFIX, RETRIEVAL_PREFIX, TOOLS_PREFIX)
"""Prefixes of the metrics a run has beyond ``ALL_METRICS`` (one per grader, per retrieval
metric and per tool-call metric of agent cases), which pages list after the fixed ones."""

RETRIEVAL_NAMES = {"mrr": "MRR", "hit": "Hit", "ndcg": "NDCG", "precision": "Precision",
                   "recall": "Recall"}  # fmt: skip
"""The retrieval metrics by kind, in the order pages list them, with their human names
(``domain_retrieval_metrics.sql`` orders the same way)."""


def retrieval_order(metrics: Iterable[str]) -> list[str]:
    """``metrics`` with the retrieval ones (``retrieval:ndcg@5``...) ordered by kind, then k;
    the others dropped."""

    def key(metric: str) -> tuple[int, int]:
        kind, _, k = metric.removeprefix(RETRIEVAL_PREFIX).partition("@")
        order = list(RETRIEVAL_NAMES)
        return (order.index(kind) if kind in order else len(order), int(k) if k.isdigit() else 0)

    return sorted((m for m in metrics if m.startswith(RETRIEVAL_PREFIX)), key=key)


def metric_label(metric: str) -> str:
    """The human name of a metric, graders' and retrieval's included (``grader:x`` ->
    ``Grader x``, ``retrieval:ndcg@5`` -> ``Retrieval NDCG@5``)."""
    if metric.startswith(GRADER_PREFIX):
        return f"Grader {metric.removeprefix(GRADER_PREFIX)}"
    if metric.startswith(RETRIEVAL_PREFIX):
        kind, at, k = metric.removeprefix(RETRIEVAL_PREFIX).partition("@")
        return f"Retrieval {RETRIEVAL_NAMES.get(kind, kind)}{at}{k}"
    if metric.startswith(TOOLS_PREFIX):
        name = metric.removeprefix(TOOLS_PREFIX)
        return TOOL_LABELS.get(name, name)
    return METRIC_LABELS.get(metric, metric)


def check_metric(metric: str) -> str:
    """``metric`` when it is one of ``ALL_METRICS`` or a grader's; else ValueError."""
    if metric.startswith(GRADER_PREFIX) and len(metric) > len(GRADER_PREFIX):
        return metric
    if metric not in ALL_METRICS:
        raise ValueError(f"unknown metric {metric!r}; expected one of {', '.join(ALL_METRICS)}")
    return metric


# ----------------------------------------------------------------------------- runs


@named_query
def runs(wh: Warehouse) -> pl.DataFrame:
    """Every run, newest first, with headline numbers (``run_summary``)."""
    return wh.named("runs")


@named_query
def run_list(wh: Warehouse) -> pl.DataFrame:
    """Every run, newest first, for the run pickers: name, status, start, archived, tags
    (no numbers over its results: ``runs`` has those)."""
    return wh.named("run_list")


@named_query
def previous_run(wh: Warehouse, run_id: str) -> str | None:
    """The run that started just before ``run_id``, if any."""
    frame = wh.named("previous_run", run_id=run_id)
    return None if frame.is_empty() else str(frame["run_id"][0])


@named_query
def runs_detail(wh: Warehouse) -> pl.DataFrame:
    """Every run, newest first: state, duration, headline numbers, judge, embedder, prompt
    version, test set and hash, config (the Runs page)."""
    return wh.named("runs_detail")


@named_query
def baseline_run(wh: Warehouse, run_id: str) -> str | None:
    """The default baseline of ``run_id``: the previous completed run of its series (view
    ``run_series``), archived runs skipped; None for the first run of a series."""
    frame = wh.named("baseline_run", run_id=run_id)
    return None if frame.is_empty() else str(frame["run_id"][0])


@named_query
def run_cards(wh: Warehouse, run_id: str) -> dict[str, Any]:
    """One run's headline numbers (samples, errors, pass rate, abstention rate, overall,
    cost, p50/p95 latency)."""
    return wh.named("run_cards", run_id=run_id).row(0, named=True)


@named_query
def card_sample_deltas(wh: Warehouse, run_id: str, baseline_run_id: str) -> pl.DataFrame:
    """Per sample in both runs, the change of each header card's per-sample value (its
    mean over iterations): what the cards' paired bootstrap resamples."""
    return wh.named("card_sample_deltas", run_id=run_id, baseline_run_id=baseline_run_id)


@named_query
def run_tiers(wh: Warehouse, run_id: str) -> TierThresholds:
    """The tier thresholds ``run_id`` was scored with (``runs.config`` analyzer.tiers); the
    defaults when the run or its config does not say, or says something out of range."""
    frame = wh.named("run_tiers", run_id=run_id)
    if frame.is_empty():
        return TierThresholds()
    given = {k: v for k, v in frame.row(0, named=True).items() if v is not None}
    try:
        return TierThresholds(**given)
    except ValidationError:
        return TierThresholds()


@named_query
def domain_overview(wh: Warehouse, run_id: str, baseline_run_id: str | None) -> pl.DataFrame:
    """Per-domain means of a run (``domain_scores``), the baseline's means and the deltas."""
    return wh.named("domain_overview", run_id=run_id, baseline_run_id=baseline_run_id)


@named_query
def table_counts(wh: Warehouse) -> pl.DataFrame:
    """Approximate rows per table."""
    return wh.named("table_counts")


# ----------------------------------------------------------------------------- sql page


@named_query
def schema_columns(wh: Warehouse) -> pl.DataFrame:
    """Every column of every table and view: object, kind, column, type, position."""
    return wh.named("schema_columns")


# ----------------------------------------------------------------------------- trends


@named_query
def trends(wh: Warehouse, domains: tuple[str, ...] | None = None) -> pl.DataFrame:
    """Per run, domain and metric: the mean score, run name, start and sample count."""
    return wh.named("trends", domains=list(domains) if domains else None)


# ----------------------------------------------------------------------------- compare


@named_query
def compare_counts(
    wh: Warehouse,
    run_id: str,
    baseline_run_id: str,
    *,
    metric: str,
    tolerance: float,
    candidate: str | None = None,
    baseline_candidate: str | None = None,
    shared_only: bool = False,
) -> pl.DataFrame:
    """Per domain: paired samples improved, regressed and unchanged beyond ``tolerance``;
    with ``shared_only``, only the cases both runs scored with the same content."""
    return wh.named(
        "compare_counts",
        run_id=run_id,
        baseline_run_id=baseline_run_id,
        metric=check_metric(metric),
        tolerance=float(tolerance),
        candidate=candidate,
        baseline_candidate=baseline_candidate,
        shared_only=shared_only,
    )


# ----------------------------------------------------------------------------- claims


@named_query
def claims_by_domain(wh: Warehouse, run_id: str) -> pl.DataFrame:
    """Per domain of a run: claims checked, found, missing and the share found."""
    return wh.named("claims_by_domain", run_id=run_id)


@named_query
def claims_by_query(
    wh: Warehouse,
    run_id: str,
    *,
    domain: str | None = None,
    limit: int = PAGE_SIZE,
    offset: int = 0,
) -> pl.DataFrame:
    """One page of a run's queries with claims found and missing, most missing first."""
    return wh.named("claims_by_query", run_id=run_id, domain=domain, limit=limit, offset=offset)


@named_query
def most_missed_claims(
    wh: Warehouse,
    *,
    domain: str | None = None,
    limit: int = 50,
    max_runs: int = 10,
    include_archived: bool = False,
) -> pl.DataFrame:
    """The claims missed most often across the latest ``max_runs`` runs (archived runs left
    out unless ``include_archived``), with the latest sample that missed each."""
    return wh.named(
        "most_missed_claims",
        domain=domain,
        limit=limit,
        max_runs=max_runs,
        include_archived=include_archived,
    )


# ----------------------------------------------------------------------------- attribution


@named_query
def attribution_rates(wh: Warehouse, run_id: str) -> pl.DataFrame:
    """Per domain and AI provider: percent of responses citing a URL, domain, brand, any."""
    return wh.named("attribution_rates", run_id=run_id)


@named_query
def attribution_trend(wh: Warehouse, domain: str | None = None) -> pl.DataFrame:
    """Per run and domain: percent of responses with each mention type (long form)."""
    return wh.named("attribution_trend", domain=domain)


# ----------------------------------------------------------------------------- launcher


class RunInfo(TypedDict):
    """One run's latest state (``run_info.sql``)."""

    run_id: str
    name: str
    status: str
    started_at: datetime
    test_set: str
    config: str | None
    """The run's settings as JSON (``RunConfig``)."""
    judge: str
    embedder: str
    iterations: int


@named_query
def run_info(wh: Warehouse, run_id: str) -> RunInfo | None:
    """The latest state of one run (name, test set, config), or None."""
    frame = wh.named("run_info", run_id=run_id)
    # The columns are the SQL file's, checked against RunInfo by a test.
    return None if frame.is_empty() else cast(RunInfo, frame.row(0, named=True))


@named_query
def rerun_sample_ids(
    wh: Warehouse, run_id: str, *, failed_only: bool = False, domain: str | None = None
) -> list[str]:
    """Sample ids to evaluate again: a run's failed samples, or one domain's."""
    frame = wh.named("rerun_sample_ids", run_id=run_id, failed_only=failed_only, domain=domain)
    return [str(s) for s in frame["sample_id"]]


# ----------------------------------------------------------------------------- alerts


@named_query
def alert_states(wh: Warehouse, series: str) -> dict[tuple[str, str], str]:
    """(rule, domain or '') -> the latest state (firing, cleared) of each alert rule of a
    series."""
    frame = wh.named("alert_states", series=series)
    return {(str(r["rule"]), str(r["domain"])): str(r["state"]) for r in frame.to_dicts()}


@named_query
def alert_domain_metric(wh: Warehouse, run_id: str, metric: str, domain: str) -> float | None:
    """One domain's mean of one analyzer metric in a run (None when it has none)."""
    frame = wh.named("alert_domain_metric", run_id=run_id, metric=metric, domain=domain)
    value = frame["value"][0] if frame.height else None
    return None if value is None else float(value)


@named_query
def alert_sample_values(wh: Warehouse, run_id: str, metric: str, domain: str) -> pl.DataFrame:
    """sample_id, candidate, value: each sample's mean of a per-sample metric in a run (one
    domain, or all for '')."""
    return wh.named("alert_sample_values", run_id=run_id, metric=metric, domain=domain)


@named_query
def firing_alerts(wh: Warehouse, run_id: str) -> pl.DataFrame:
    """Alert rules of the run's series firing as of that run (later runs left out): rule,
    domain, metric, kind, value, threshold, since, fired_in."""
    return wh.named("firing_alerts", run_id=run_id)


@named_query
def metric_distribution(wh: Warehouse, run_id: str) -> pl.DataFrame:
    """domain, metric, samples, low, q1, median, q3, high: each analyzer metric's spread
    over a run's samples, per domain."""
    return wh.named("metric_distribution", run_id=run_id)


@named_query
def review_next(wh: Warehouse, run_id: str, limit: int | None = None) -> pl.DataFrame:
    """A run's unreviewed samples, machine disagreements first, then the least sure claim
    verdicts (``review_next.sql``)."""
    from engine.models import TierThresholds
    from engine.scoring.judging import CONFIDENCE_BAR

    return wh.named(
        "review_next",
        run_id=run_id,
        good=TierThresholds().good,
        unsure_below=CONFIDENCE_BAR,
        limit=limit or REVIEW_QUEUE_LIMIT,
    )


# ----------------------------------------------------------------------------- conversations


@named_query
def conversation_runs(wh: Warehouse) -> pl.DataFrame:
    """Runs with conversation scores (multi-turn test sets), newest first."""
    return wh.named("conversation_runs")


@named_query
def run_conversations(wh: Warehouse, run_id: str) -> pl.DataFrame:
    """The conversations of one run with their conversation-level scores (0-1)."""
    return wh.named("run_conversations", run_id=run_id)


@named_query
def conversation_turns(wh: Warehouse, ref: SampleRef) -> pl.DataFrame:
    """Every turn of one conversation (``ref.sample_id``), in order, with its grading."""
    return wh.named("conversation_turns", **ref.params())


@named_query
def conversation_summary(wh: Warehouse, ref: SampleRef) -> pl.DataFrame:
    """The conversation-level scores of one conversation (one row, or none)."""
    return wh.named("conversation_summary", **ref.params())


# The queries of one page or command each live in a module of their own; re-exported here so
# callers keep one import (``from warehouse import queries as q``).
from warehouse.check_queries import (  # noqa: E402
    check_metrics as check_metrics,
    check_worst_samples as check_worst_samples,
    grader_errors as grader_errors,
    required_claims_missing as required_claims_missing,
    run_exists as run_exists,
)
from warehouse.export_queries import (  # noqa: E402
    export_claims as export_claims,
    export_run as export_run,
    export_samples as export_samples,
    preference_pairwise as preference_pairwise,
    preference_reviews as preference_reviews,
    run_candidates as run_candidates,
)
from warehouse.overview_queries import (  # noqa: E402
    domain_grader_metrics as domain_grader_metrics,
    domain_metrics as domain_metrics,
    domain_retrieval_metrics as domain_retrieval_metrics,
    grader_sample_deltas as grader_sample_deltas,
    grader_sample_deltas_all as grader_sample_deltas_all,
    retrieval_sample_deltas_all as retrieval_sample_deltas_all,
    run_filters as run_filters,
    run_graders as run_graders,
    sample_deltas as sample_deltas,
    sample_deltas_all as sample_deltas_all,
    tier_distribution as tier_distribution,
)
from warehouse.pairwise_queries import (  # noqa: E402
    candidate_family_tree as candidate_family_tree,
    comparison_domains as comparison_domains,
    comparisons as comparisons,
    leaderboard as leaderboard,
    lineage_runs as lineage_runs,
    rating_games as rating_games,
)
from warehouse.review_queries import (  # noqa: E402
    REVIEW_COMMENTS_LIMIT as REVIEW_COMMENTS_LIMIT,
    REVIEW_QUEUE_LIMIT as REVIEW_QUEUE_LIMIT,
    agreement_confusion as agreement_confusion,
    judge_agreement as judge_agreement,
    review_comments as review_comments,
    review_queue as review_queue,
    reviewed_runs as reviewed_runs,
    sample_reviews as sample_reviews,
)
from warehouse.sample_queries import (  # noqa: E402
    SAMPLE_FILTER_METRICS as SAMPLE_FILTER_METRICS,
    export_cases as export_cases,
    run_flags as run_flags,
    run_low_faithfulness as run_low_faithfulness,
    run_samples as run_samples,
    sample_attributions as sample_attributions,
    sample_case as sample_case,
    sample_claims as sample_claims,
    sample_graders as sample_graders,
    sample_highlights as sample_highlights,
    sample_result as sample_result,
    sample_retrieval as sample_retrieval,
    sample_verdicts as sample_verdicts,
    sample_versions as sample_versions,
)
