"""Typed queries of the dashboard: one function per ``sql/queries/dash_*.sql`` file.

Every function takes a ``Warehouse`` and returns a polars DataFrame (or a small value).
Aggregation happens in SQL; per-row details come one page at a time (``limit`` /
``offset``), so no page pulls a whole table into Python. Values are always bound as
``$name`` parameters, never formatted into the SQL text.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from warehouse.queries import Warehouse

METRICS = ("accuracy", "completeness", "attribution")
"""The analyzer metrics (0-100) the dashboard shows."""

PAGE_SIZE = 50
"""Rows per page of every paginated detail table."""


@dataclass(frozen=True)
class Filters:
    """Overview filters; ``None`` means "every value"."""

    candidate: str | None = None
    """One candidate of a multi-candidate run."""
    providers: tuple[str, ...] | None = None
    """AI providers to keep."""
    tag: str | None = None
    """Keep only samples carrying this tag."""

    def params(self) -> dict[str, object]:
        """The bound parameters of the filter clause shared by the Overview queries."""
        return {
            "candidate": self.candidate,
            "providers": list(self.providers) if self.providers else None,
            "tag": self.tag,
        }


@dataclass(frozen=True)
class SampleRef:
    """One scored sample: the key every per-sample table carries."""

    run_id: str
    """Run id."""
    sample_id: str
    """Test-case id."""
    iteration: int = 1
    """Iteration number."""
    candidate: str = ""
    """Candidate id (empty for single-candidate runs)."""

    def params(self) -> dict[str, object]:
        """The bound parameters of the per-sample queries."""
        return {
            "run_id": self.run_id,
            "sample_id": self.sample_id,
            "iteration": self.iteration,
            "candidate": self.candidate,
        }


def _check_metric(metric: str) -> str:
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; expected one of {', '.join(METRICS)}")
    return metric


# ----------------------------------------------------------------------------- overview


def run_filters(wh: Warehouse, run_id: str) -> dict[str, list[str]]:
    """Values offered by the filters of a run: ``provider``, ``tag``, ``candidate``, ``domain``."""
    frame = wh.named("dash_run_filters", run_id=run_id)
    out: dict[str, list[str]] = {"provider": [], "tag": [], "candidate": [], "domain": []}
    for kind, value in frame.iter_rows():
        if value is not None:
            out[str(kind)].append(str(value))
    return out


def domain_metrics(
    wh: Warehouse, run_id: str, baseline_run_id: str | None, filters: Filters
) -> pl.DataFrame:
    """Per-domain means, baseline means, deltas and per-iteration spreads of a run."""
    return wh.named(
        "dash_domain_metrics", run_id=run_id, baseline_run_id=baseline_run_id, **filters.params()
    )


def tier_distribution(wh: Warehouse, run_id: str, filters: Filters) -> pl.DataFrame:
    """Result rows per (domain, metric, tier) of a run under the filters."""
    return wh.named("dash_tier_distribution", run_id=run_id, **filters.params())


def sample_deltas(
    wh: Warehouse, run_id: str, baseline_run_id: str, domain: str, filters: Filters
) -> pl.DataFrame:
    """Per-sample metric deltas of one domain between two runs (paired by sample id)."""
    return wh.named(
        "dash_sample_deltas",
        run_id=run_id,
        baseline_run_id=baseline_run_id,
        domain=domain,
        **filters.params(),
    )


# ----------------------------------------------------------------------------- sample


def run_samples(
    wh: Warehouse,
    run_id: str,
    *,
    domain: str | None = None,
    search: str | None = None,
    limit: int = PAGE_SIZE,
    offset: int = 0,
) -> pl.DataFrame:
    """One page of a run's result rows, with ``total_rows`` for the pager."""
    return wh.named(
        "dash_run_samples",
        run_id=run_id,
        domain=domain,
        search=search or None,
        limit=limit,
        offset=offset,
    )


def sample_versions(wh: Warehouse, run_id: str, sample_id: str) -> pl.DataFrame:
    """The (iteration, candidate) pairs one sample of a run was scored in."""
    return wh.named("dash_sample_versions", run_id=run_id, sample_id=sample_id)


def sample_result(wh: Warehouse, ref: SampleRef) -> pl.DataFrame:
    """The results row of one sample (empty when unknown)."""
    return wh.named("dash_sample_result", **ref.params())


def sample_highlights(wh: Warehouse, ref: SampleRef) -> pl.DataFrame:
    """Response spans of a sample and the ground-truth passages they match."""
    return wh.named("dash_sample_highlights", **ref.params())


def sample_claims(wh: Warehouse, ref: SampleRef) -> pl.DataFrame:
    """Expected claims of a sample, found or missing, with evidence."""
    return wh.named("dash_sample_claims", **ref.params())


def sample_attributions(wh: Warehouse, ref: SampleRef) -> pl.DataFrame:
    """URL, domain and brand mentions in a sample's response."""
    return wh.named("dash_sample_attributions", **ref.params())


def sample_verdicts(wh: Warehouse, ref: SampleRef) -> pl.DataFrame:
    """Verdicts on the claims of a sample's response."""
    return wh.named("dash_sample_verdicts", **ref.params())


def sample_graders(wh: Warehouse, ref: SampleRef) -> pl.DataFrame:
    """Grader scores of a sample's output."""
    return wh.named("dash_sample_graders", **ref.params())


# ----------------------------------------------------------------------------- sql page


def schema_columns(wh: Warehouse) -> pl.DataFrame:
    """Every column of every table and view: object, kind, column, type, position."""
    return wh.named("dash_schema_columns")


# ----------------------------------------------------------------------------- trends


def trends(wh: Warehouse, domains: tuple[str, ...] | None = None) -> pl.DataFrame:
    """Per run, domain and metric: the mean score, run name, start and sample count."""
    return wh.named("dash_trends", domains=list(domains) if domains else None)


# ----------------------------------------------------------------------------- compare


def compare_counts(
    wh: Warehouse,
    run_id: str,
    baseline_run_id: str,
    *,
    metric: str,
    tolerance: float,
    candidate: str | None = None,
    baseline_candidate: str | None = None,
) -> pl.DataFrame:
    """Per domain: paired samples improved, regressed and unchanged beyond ``tolerance``."""
    return wh.named(
        "dash_compare_counts",
        run_id=run_id,
        baseline_run_id=baseline_run_id,
        metric=_check_metric(metric),
        tolerance=float(tolerance),
        candidate=candidate,
        baseline_candidate=baseline_candidate,
    )


def compare_samples(
    wh: Warehouse,
    run_id: str,
    baseline_run_id: str,
    *,
    metric: str,
    tolerance: float,
    candidate: str | None = None,
    baseline_candidate: str | None = None,
    status: str | None = None,
    domain: str | None = None,
    limit: int = PAGE_SIZE,
    offset: int = 0,
) -> pl.DataFrame:
    """One page of paired samples, largest regression first, with ``total_rows``."""
    return wh.named(
        "dash_compare_samples",
        run_id=run_id,
        baseline_run_id=baseline_run_id,
        metric=_check_metric(metric),
        tolerance=float(tolerance),
        candidate=candidate,
        baseline_candidate=baseline_candidate,
        status=status,
        domain=domain,
        limit=limit,
        offset=offset,
    )


# ----------------------------------------------------------------------------- claims


def claims_by_domain(wh: Warehouse, run_id: str) -> pl.DataFrame:
    """Per domain of a run: claims checked, found, missing and the share found."""
    return wh.named("dash_claims_by_domain", run_id=run_id)


def claims_by_query(
    wh: Warehouse,
    run_id: str,
    *,
    domain: str | None = None,
    limit: int = PAGE_SIZE,
    offset: int = 0,
) -> pl.DataFrame:
    """One page of a run's queries with claims found and missing, most missing first."""
    return wh.named(
        "dash_claims_by_query", run_id=run_id, domain=domain, limit=limit, offset=offset
    )


def most_missed_claims(
    wh: Warehouse, *, domain: str | None = None, limit: int = 50, max_runs: int = 10
) -> pl.DataFrame:
    """The claims missed most often across the latest ``max_runs`` runs, with the latest
    sample that missed each."""
    return wh.named("dash_most_missed", domain=domain, limit=limit, max_runs=max_runs)


# ----------------------------------------------------------------------------- attribution


def attribution_rates(wh: Warehouse, run_id: str) -> pl.DataFrame:
    """Per domain and AI provider: percent of responses citing a URL, domain, brand, any."""
    return wh.named("dash_attribution_rates", run_id=run_id)


def attribution_trend(wh: Warehouse, domain: str | None = None) -> pl.DataFrame:
    """Per run and domain: percent of responses with each mention type (long form)."""
    return wh.named("dash_attribution_trend", domain=domain)


# ----------------------------------------------------------------------------- launcher


def run_info(wh: Warehouse, run_id: str) -> dict[str, object] | None:
    """The latest state of one run (name, test set, config), or None."""
    frame = wh.named("dash_run_info", run_id=run_id)
    return None if frame.is_empty() else frame.row(0, named=True)


def rerun_sample_ids(
    wh: Warehouse, run_id: str, *, failed_only: bool = False, domain: str | None = None
) -> list[str]:
    """Sample ids to evaluate again: a run's failed samples, or one domain's."""
    frame = wh.named("dash_run_sample_ids", run_id=run_id, failed_only=failed_only, domain=domain)
    return [str(s) for s in frame["sample_id"]]
