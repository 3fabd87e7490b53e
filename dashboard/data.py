"""The only place the dashboard caches: one ``st.cache_data`` function per query.

Every cached function takes the warehouse path and the warehouse's data version as its
first arguments, so a new ingest changes the key and pages show the new data at once
(the version itself is re-read at most once a second). Pages call the public wrappers,
which fill those two in.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import polars as pl
import streamlit as st

from dashboard.noise import NoiseCheck, bootstrap_check, iteration_check
from engine.settings import Paths, resolve_paths
from engine.testsets import TestSetError, load_test_set
from warehouse import dashboard_queries as dq
from warehouse.db import QueryError, QueryResult
from warehouse.queries import Warehouse

TTL_S = 3600
"""Cached results live an hour at most (the version key makes them stale sooner)."""

SQL_TIME_LIMIT_S = 20.0
"""Time limit of SQL-page queries."""

SQL_ROW_CAP = 10_000
"""Rows the SQL page returns at most."""

SQL_MAX_CHARS = 20_000
"""Longer SQL-page queries are refused before they reach DuckDB."""


def home_paths() -> Paths:
    """The evalhouse home: ``--home DIR`` after ``--`` on the streamlit command line, else
    ``$EVALHOUSE_HOME``, else ``./evalhouse-data``."""
    argv = sys.argv[1:]
    for i, arg in enumerate(argv):
        if arg == "--home" and i + 1 < len(argv):
            return resolve_paths(argv[i + 1])
        if arg.startswith("--home="):
            return resolve_paths(arg.split("=", 1)[1])
    return resolve_paths(os.environ.get("EVALHOUSE_HOME") or None)


@st.cache_resource
def _warehouse(path: str) -> Warehouse:
    return Warehouse(Path(path))


def warehouse() -> Warehouse:
    """The shared read facade over the current home's warehouse."""
    return _warehouse(str(home_paths().warehouse))


@st.cache_data(ttl=1.0, show_spinner=False)
def _version(path: str) -> str:
    try:
        return _warehouse(path).data_version()
    except QueryError:
        # A file without the ledger (not made by ingest): key on its modification time.
        return f"unversioned:{Path(path).stat().st_mtime_ns}"


def _key() -> tuple[str, str]:
    path = str(home_paths().warehouse)
    return path, _version(path)


# ----------------------------------------------------------------------------- runs


@st.cache_data(ttl=TTL_S, show_spinner="Loading runs…")
def _runs(path: str, version: str) -> pl.DataFrame:
    return _warehouse(path).runs()


def runs() -> pl.DataFrame:
    """Every run, newest first (``run_summary``); raises ``WarehouseMissing`` when absent."""
    return _runs(*_key())


@st.cache_data(ttl=TTL_S, show_spinner=False)
def _previous_run(path: str, version: str, run_id: str) -> str | None:
    return _warehouse(path).previous_run(run_id)


def previous_run(run_id: str) -> str | None:
    """The run that started just before ``run_id``."""
    return _previous_run(*_key(), run_id)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def _run_filters(path: str, version: str, run_id: str) -> dict[str, list[str]]:
    return dq.run_filters(_warehouse(path), run_id)


def run_filters(run_id: str) -> dict[str, list[str]]:
    """Providers, tags, candidates and domains of a run."""
    return _run_filters(*_key(), run_id)


# ----------------------------------------------------------------------------- overview


def _noise_for(
    wh: Warehouse, row: dict[str, object], run_id: str, baseline: str, filters: dq.Filters
) -> dict[str, NoiseCheck]:
    iterations = int(row["iterations"] or 1)  # type: ignore[call-overload]
    out: dict[str, NoiseCheck] = {}
    deltas: pl.DataFrame | None = None
    for metric in dq.METRICS:
        delta = row[f"{metric}_delta"]
        if delta is None:
            out[metric] = NoiseCheck("none", note="no baseline")
        elif iterations > 1:
            out[metric] = iteration_check(
                float(delta),  # type: ignore[arg-type]
                row[f"{metric}_sd"],  # type: ignore[arg-type]
                iterations,
                row[f"baseline_{metric}_sd"],  # type: ignore[arg-type]
                int(row["baseline_iterations"] or 1),  # type: ignore[call-overload]
            )
        else:
            if deltas is None:
                deltas = dq.sample_deltas(wh, run_id, baseline, str(row["domain"]), filters)
            values = deltas[f"{metric}_delta"].cast(pl.Float64).fill_null(np.nan).to_numpy()
            out[metric] = bootstrap_check(values)
    return out


@st.cache_data(ttl=TTL_S, show_spinner="Computing domain scores…")
def _overview(
    path: str, version: str, run_id: str, baseline: str | None, filters: dq.Filters
) -> pl.DataFrame:
    wh = _warehouse(path)
    frame = dq.domain_metrics(wh, run_id, baseline, filters)
    labels: dict[str, list[str]] = {m: [] for m in dq.METRICS}
    flags: dict[str, list[bool | None]] = {m: [] for m in dq.METRICS}
    for row in frame.iter_rows(named=True):
        if baseline is None:
            checks = {m: NoiseCheck("none", note="no baseline") for m in dq.METRICS}
        else:
            checks = _noise_for(wh, row, run_id, baseline, filters)
        for metric, check in checks.items():
            labels[metric].append(check.label())
            flags[metric].append(check.beyond_noise)
    return frame.with_columns(
        *(pl.Series(f"{m}_noise", labels[m], dtype=pl.String) for m in dq.METRICS),
        *(pl.Series(f"{m}_beyond_noise", flags[m], dtype=pl.Boolean) for m in dq.METRICS),
    )


def overview(run_id: str, baseline: str | None, filters: dq.Filters) -> pl.DataFrame:
    """Per-domain metrics of a run vs a baseline, with a noise verdict per delta."""
    return _overview(*_key(), run_id, baseline, filters)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def _tiers(path: str, version: str, run_id: str, filters: dq.Filters) -> pl.DataFrame:
    return dq.tier_distribution(_warehouse(path), run_id, filters)


def tier_distribution(run_id: str, filters: dq.Filters) -> pl.DataFrame:
    """Rows per (domain, metric, tier) of a run under the filters."""
    return _tiers(*_key(), run_id, filters)


# ----------------------------------------------------------------------------- sample


@st.cache_data(ttl=TTL_S, show_spinner=False)
def _run_samples(
    path: str, version: str, run_id: str, domain: str | None, search: str | None, offset: int
) -> pl.DataFrame:
    return dq.run_samples(_warehouse(path), run_id, domain=domain, search=search, offset=offset)


def run_samples(
    run_id: str, *, domain: str | None = None, search: str | None = None, offset: int = 0
) -> pl.DataFrame:
    """One page of a run's result rows (``total_rows`` holds the full count)."""
    return _run_samples(*_key(), run_id, domain, search, offset)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def _sample_versions(path: str, version: str, run_id: str, sample_id: str) -> pl.DataFrame:
    return dq.sample_versions(_warehouse(path), run_id, sample_id)


def sample_versions(run_id: str, sample_id: str) -> pl.DataFrame:
    """Iterations and candidates one sample was scored in."""
    return _sample_versions(*_key(), run_id, sample_id)


@st.cache_data(ttl=TTL_S, show_spinner="Loading the sample…")
def _sample_detail(path: str, version: str, ref: dq.SampleRef) -> dict[str, pl.DataFrame]:
    wh = _warehouse(path)
    return {
        "result": dq.sample_result(wh, ref),
        "highlights": dq.sample_highlights(wh, ref),
        "claims": dq.sample_claims(wh, ref),
        "attributions": dq.sample_attributions(wh, ref),
        "verdicts": dq.sample_verdicts(wh, ref),
        "graders": dq.sample_graders(wh, ref),
    }


def sample_detail(ref: dq.SampleRef) -> dict[str, pl.DataFrame]:
    """Result row, highlights, claims, attributions, verdicts and grader scores of a sample."""
    return _sample_detail(*_key(), ref)


@st.cache_data(ttl=TTL_S, show_spinner=False, max_entries=8)
def _test_set_chunks(path: str, mtime_ns: int) -> dict[str, list[dict[str, str]]]:
    loaded = load_test_set(Path(path))
    return {
        case.id: [
            {"chunk_id": c.chunk_id, "page_url": c.page_url, "text": c.text}
            for c in case.ground_truth
        ]
        for case in loaded.cases
    }


def ground_truth(test_set: str | None, sample_id: str) -> list[dict[str, str]] | None:
    """The ground-truth passages of a sample, read from the run's test set when the file is
    still there (None when it is not: the page then shows the matched passages only)."""
    if not test_set:
        return None
    candidates = [Path(test_set), home_paths().home / test_set, home_paths().test_sets / test_set]
    for path in candidates:
        try:
            if path.is_file():
                chunks = _test_set_chunks(str(path.resolve()), path.stat().st_mtime_ns)
                return chunks.get(sample_id)
        except (OSError, TestSetError):
            return None
    return None


# ----------------------------------------------------------------------------- sql


@st.cache_data(ttl=TTL_S, show_spinner=False)
def _schema(path: str, version: str) -> pl.DataFrame:
    return dq.schema_columns(_warehouse(path))


def schema_columns() -> pl.DataFrame:
    """Columns of every table and view, for the schema browser."""
    return _schema(*_key())


@st.cache_data(ttl=TTL_S, show_spinner="Running the query…", max_entries=32)
def _run_sql(path: str, version: str, text: str) -> QueryResult:
    return _warehouse(path).sql(text, time_limit_s=SQL_TIME_LIMIT_S, row_cap=SQL_ROW_CAP)


def run_sql(text: str) -> QueryResult:
    """Run analyst SQL in the read-only sandbox with the page's time limit and row cap."""
    if len(text) > SQL_MAX_CHARS:
        raise QueryError(
            f"the query is {len(text):,} characters long; the limit is {SQL_MAX_CHARS:,}"
        )
    return _run_sql(*_key(), text)


# ----------------------------------------------------------------------------- trends


@st.cache_data(ttl=TTL_S, show_spinner="Loading trends…")
def _trends(path: str, version: str, domains: tuple[str, ...] | None) -> pl.DataFrame:
    return dq.trends(_warehouse(path), domains)


def trends(domains: tuple[str, ...] | None = None) -> pl.DataFrame:
    """Per run, domain and metric: mean score, run name, start and sample count."""
    return _trends(*_key(), domains)


# ----------------------------------------------------------------------------- compare


@st.cache_data(ttl=TTL_S, show_spinner="Comparing…")
def _compare_counts(
    path: str,
    version: str,
    run_id: str,
    baseline: str,
    metric: str,
    tolerance: float,
    candidate: str | None,
    baseline_candidate: str | None,
) -> pl.DataFrame:
    return dq.compare_counts(
        _warehouse(path),
        run_id,
        baseline,
        metric=metric,
        tolerance=tolerance,
        candidate=candidate,
        baseline_candidate=baseline_candidate,
    )


def compare_counts(
    run_id: str,
    baseline: str,
    *,
    metric: str,
    tolerance: float,
    candidate: str | None = None,
    baseline_candidate: str | None = None,
) -> pl.DataFrame:
    """Per domain: improved / regressed / unchanged samples."""
    return _compare_counts(
        *_key(), run_id, baseline, metric, tolerance, candidate, baseline_candidate
    )


@st.cache_data(ttl=TTL_S, show_spinner=False)
def _compare_samples(
    path: str,
    version: str,
    run_id: str,
    baseline: str,
    metric: str,
    tolerance: float,
    candidate: str | None,
    baseline_candidate: str | None,
    status: str | None,
    domain: str | None,
    offset: int,
) -> pl.DataFrame:
    return dq.compare_samples(
        _warehouse(path),
        run_id,
        baseline,
        metric=metric,
        tolerance=tolerance,
        candidate=candidate,
        baseline_candidate=baseline_candidate,
        status=status,
        domain=domain,
        offset=offset,
    )


def compare_samples(
    run_id: str,
    baseline: str,
    *,
    metric: str,
    tolerance: float,
    candidate: str | None = None,
    baseline_candidate: str | None = None,
    status: str | None = None,
    domain: str | None = None,
    offset: int = 0,
) -> pl.DataFrame:
    """One page of paired samples, largest regression first."""
    return _compare_samples(
        *_key(),
        run_id,
        baseline,
        metric,
        tolerance,
        candidate,
        baseline_candidate,
        status,
        domain,
        offset,
    )


# ----------------------------------------------------------------------------- claims


@st.cache_data(ttl=TTL_S, show_spinner=False)
def _claims_by_domain(path: str, version: str, run_id: str) -> pl.DataFrame:
    return dq.claims_by_domain(_warehouse(path), run_id)


def claims_by_domain(run_id: str) -> pl.DataFrame:
    """Claims found and missing per domain of a run."""
    return _claims_by_domain(*_key(), run_id)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def _claims_by_query(
    path: str, version: str, run_id: str, domain: str | None, offset: int
) -> pl.DataFrame:
    return dq.claims_by_query(_warehouse(path), run_id, domain=domain, offset=offset)


def claims_by_query(run_id: str, *, domain: str | None = None, offset: int = 0) -> pl.DataFrame:
    """One page of a run's queries with claims found and missing."""
    return _claims_by_query(*_key(), run_id, domain, offset)


@st.cache_data(ttl=TTL_S, show_spinner="Finding the most-missed claims…")
def _most_missed(path: str, version: str, domain: str | None) -> pl.DataFrame:
    return dq.most_missed_claims(_warehouse(path), domain=domain)


def most_missed_claims(domain: str | None = None) -> pl.DataFrame:
    """The claims missed most often across runs."""
    return _most_missed(*_key(), domain)


# ----------------------------------------------------------------------------- attribution


@st.cache_data(ttl=TTL_S, show_spinner=False)
def _attribution_rates(path: str, version: str, run_id: str) -> pl.DataFrame:
    return dq.attribution_rates(_warehouse(path), run_id)


def attribution_rates(run_id: str) -> pl.DataFrame:
    """Mention rates per domain and AI provider of a run."""
    return _attribution_rates(*_key(), run_id)


@st.cache_data(ttl=TTL_S, show_spinner="Loading the attribution trend…")
def _attribution_trend(path: str, version: str, domain: str | None) -> pl.DataFrame:
    return dq.attribution_trend(_warehouse(path), domain)


def attribution_trend(domain: str | None = None) -> pl.DataFrame:
    """Mention rates per run and domain."""
    return _attribution_trend(*_key(), domain)


# ----------------------------------------------------------------------------- launcher


def run_info(run_id: str) -> dict[str, object] | None:
    """The latest state of a run (not cached: asked only when relaunching)."""
    return dq.run_info(warehouse(), run_id)


def rerun_sample_ids(run_id: str, *, failed_only: bool, domain: str | None) -> list[str]:
    """Sample ids to evaluate again (not cached: asked only on click)."""
    return dq.rerun_sample_ids(warehouse(), run_id, failed_only=failed_only, domain=domain)
