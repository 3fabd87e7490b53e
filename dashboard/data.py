"""The only place the dashboard caches: ONE ``st.cache_data`` call in front of every query.

Pages call ``data.query(q.some_query, *args)`` with a typed function of
``warehouse.queries`` (or one of the few dashboard computations registered below). The
one cached call is keyed on (warehouse path, data version, query name, parameters): a new
ingest changes the version and pages show the new data at once (the version itself is
re-read once per page run). Adding a query is one SQL file and one typed function;
nothing here changes.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import numpy as np
import polars as pl
import streamlit as st

from dashboard.components.cards import CARD_NOISE_METRICS
from dashboard.judge_change import JudgeChange, judge_change_of, system_frame
from engine.noise import NoiseCheck, bootstrap_check
from engine.ratings import bradley_terry
from engine.settings import Paths, resolve_paths
from warehouse import (
    compare_queries as _compare_queries,  # noqa: F401 (registers them)
    queries as q,
    reliability_queries as _reliability_queries,  # noqa: F401 (registers them)
)
from warehouse.catalog import catalog_from_env
from warehouse.db import QueryError, QueryResult
from warehouse.drift_queries import drift_run_series, judge_drift_split  # registers them all
from warehouse.noise_queries import (
    domain_changes,
    metric_sample_values,
    series_steps,
    shared_case_ids,
)
from warehouse.queries import Warehouse
from warehouse.testset_queries import run_testset_versions  # noqa: F401  (registers them)
from warehouse.tool_queries import domain_tool_metrics, tool_sample_deltas_all

TTL_S = 3600
"""Cached results live an hour at most (the version key makes them stale sooner)."""

CACHE_ENTRIES = 1024
"""Cached query results kept at most (least recently used go first)."""

SQL_TIME_LIMIT_S = 20.0
"""Time limit of SQL-page queries."""

SQL_ROW_CAP = 10_000
"""Rows the SQL page returns at most."""

SQL_MAX_CHARS = 20_000
"""Longer SQL-page queries are refused before they reach DuckDB."""

P = ParamSpec("P")
T = TypeVar("T")


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


_CATALOG_KEY = "catalog:"


def _location() -> str:
    """What the warehouse is: the file's path, or ``catalog:`` and the DuckLake catalog's
    label (password masked: the key shows up in Streamlit's cache, never the secret)."""
    catalog = catalog_from_env()
    if catalog is not None:
        return _CATALOG_KEY + catalog.label
    return str(home_paths().warehouse)


@st.cache_resource
def _warehouse(location: str) -> Warehouse:
    if location.startswith(_CATALOG_KEY):
        return Warehouse(home_paths().warehouse, catalog=catalog_from_env())
    return Warehouse(Path(location))


def warehouse() -> Warehouse:
    """The shared read facade over the current home's warehouse (the file, or the DuckLake
    catalog of ``EVALHOUSE_CATALOG``)."""
    return _warehouse(_location())


_FILE_VERSIONS: dict[str, tuple[tuple[int, ...], str]] = {}
"""Per warehouse file: its signature on disk and the data version read under it."""


def _file_signature(path: Path) -> tuple[int, ...]:
    """What every commit to the DuckDB file changes on disk: the identity, size and
    modification time (nanoseconds) of the file and of its write-ahead log (zeros for one
    that is absent)."""
    signature: list[int] = []
    for part in (path, path.with_name(path.name + ".wal")):
        try:
            info = part.stat()
        except OSError:
            signature += [0, 0, 0]
        else:
            signature += [info.st_ino, info.st_size, info.st_mtime_ns]
    return tuple(signature)


def _read_version(location: str) -> str:
    """The data version. A warehouse file is only opened when its signature on disk has
    changed since the version was last read (opening it was a quarter of a page run's
    time on the server once every query was cached); a catalog is asked every time."""
    if location.startswith(_CATALOG_KEY):
        return _query_version(location)
    signature = _file_signature(Path(location))  # before the read: a later commit changes it
    known = _FILE_VERSIONS.get(location)
    if known is not None and known[0] == signature:
        return known[1]
    version = _query_version(location)
    _FILE_VERSIONS[location] = (signature, version)
    return version


def _query_version(location: str) -> str:
    try:
        return _warehouse(location).data_version()
    except QueryError:
        if location.startswith(_CATALOG_KEY):
            return "unversioned"
        # A file without the ledger (not made by ingest): key on its modification time.
        return f"unversioned:{Path(location).stat().st_mtime_ns}"


_version = st.cache_data(ttl=1.0, show_spinner=False)(_read_version)
"""The data version outside a page run: re-read at most once a second."""


def _current_version(location: str) -> str:
    """The data version, read once per page run: a page never shows results cached under
    the version from before an ingest. Outside a session, ``_version``."""
    memo = _warehouse(location).session_memo()
    if memo is None:
        return _version(location)
    if "version" not in memo:
        memo["version"] = _read_version(location)
    return str(memo["version"])


# ----------------------------------------------------------------------------- the one cache

_QUERIES: dict[str, Callable[..., Any]] = dict(q.QUERIES)
"""What ``query`` may call: the warehouse's named queries and the computations below."""

SPINNERS: dict[str, str] = {
    "runs": "Loading runs…",
    "overview": "Computing domain scores…",
    "sample_detail": "Loading the sample…",
    "analyst_sql": "Running the query…",
    "trends": "Loading trends…",
    "compare_counts": "Comparing…",
    "compare_groups": "Comparing…",
    "most_missed_claims": "Finding the most-missed claims…",
    "attribution_trend": "Loading the attribution trend…",
}
"""Spinner texts, shown only when a call takes longer than half a second (a cache miss)."""


def register(fn: Callable[Concatenate[Warehouse, P], T]) -> Callable[Concatenate[Warehouse, P], T]:
    _QUERIES[fn.__name__] = fn
    return fn


@st.cache_data(ttl=TTL_S, show_spinner=False, max_entries=CACHE_ENTRIES)
def _cached(
    location: str,
    version: str,
    name: str,
    args: tuple[Any, ...],
    kwargs: tuple[tuple[str, Any], ...],
) -> Any:
    return _QUERIES[name](_warehouse(location), *args, **dict(kwargs))


def query(fn: Callable[Concatenate[Warehouse, P], T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """``fn(warehouse, *args, **kwargs)`` through the one cache, keyed on (warehouse path,
    data version, query name, parameters). ``fn`` must be a registered query."""
    name = fn.__name__
    if _QUERIES.get(name) is not fn:
        raise ValueError(f"{name} is not a registered warehouse query")
    location = _location()
    key_args = (location, _current_version(location), name, args, tuple(sorted(kwargs.items())))
    with st.spinner(SPINNERS.get(name, "Loading…")):  # drawn only after 0.5 s
        result: T = _cached(*key_args)
    return result


# ----------------------------------------------------------------------------- computations


def _extra_columns(
    frame: pl.DataFrame, extra: pl.DataFrame, column: str, prefix: str
) -> tuple[pl.DataFrame, list[str]]:
    """``frame`` with each value of ``extra[column]`` added as a metric ``<prefix><value>``
    (``_mean``, ``baseline_…_mean``, ``_delta``), and those metrics: graders
    (``domain_grader_metrics``) and retrieval metrics (``domain_retrieval_metrics``) join
    the Overview alike."""
    metrics: list[str] = []
    for (name,), part in extra.group_by(column, maintain_order=True):
        metric = f"{prefix}{name}"
        metrics.append(metric)
        frame = frame.join(
            part.select(
                "domain",
                pl.col("mean").alias(f"{metric}_mean"),
                pl.col("baseline_mean").alias(f"baseline_{metric}_mean"),
                pl.col("delta").alias(f"{metric}_delta"),
            ),
            on="domain",
            how="left",
        )
    return frame, metrics


class _DomainDeltas:
    """The per-sample deltas of every domain, fetched with one query at the first domain
    that needs them (not one query per domain), then split by domain in their order."""

    def __init__(self, fetch: Callable[[], pl.DataFrame]) -> None:
        self._fetch = fetch
        self._parts: dict[object, pl.DataFrame] | None = None

    def of(self, domain: object) -> pl.DataFrame | None:
        if self._parts is None:
            frame = self._fetch()
            self._parts = {
                key[0]: part.drop("domain")
                for key, part in frame.partition_by(
                    "domain", as_dict=True, maintain_order=True
                ).items()
            }
        return self._parts.get(domain)


def _noise_for(
    row: dict[str, Any],
    metrics: list[str],
    deltas: _DomainDeltas,
    extra_deltas: dict[str, tuple[_DomainDeltas, str]],
) -> dict[str, NoiseCheck]:
    """One domain's noise verdicts: the paired bootstrap over its samples (each sample's
    delta already the mean over its iterations), whatever the number of iterations."""
    out: dict[str, NoiseCheck] = {}
    for metric in metrics:
        if row[f"{metric}_delta"] is None:
            out[metric] = NoiseCheck("none", note="not measured in both runs")
            continue
        if metric.startswith(q.EXTRA_PREFIXES):
            prefix = next(p for p in q.EXTRA_PREFIXES if metric.startswith(p))
            source, column = extra_deltas[prefix]
            part = source.of(row["domain"])
            if part is not None:
                part = part.filter(pl.col(column) == metric.removeprefix(prefix))
            name = "delta"
        else:
            part = deltas.of(row["domain"])
            name = f"{metric}_delta"
        values = (
            np.empty(0)
            if part is None
            else part[name].cast(pl.Float64).fill_null(np.nan).to_numpy()
        )
        out[metric] = bootstrap_check(values)
    return out


@register
def overview(wh: Warehouse, run_id: str, baseline: str | None, filters: q.Filters) -> pl.DataFrame:
    """Per-domain metrics of a run vs a baseline, each grader's (``grader:<id>``), retrieval
    metric's (``retrieval:<metric>``) and agent tool-call metric's (``tools:<metric>``) among
    them, with a noise verdict per delta."""
    frame = q.domain_metrics(wh, run_id, baseline, filters)
    graders = q.domain_grader_metrics(wh, run_id, baseline, filters)
    frame, grader_metrics = _extra_columns(frame, graders, "grader", q.GRADER_PREFIX)
    retrieval = q.domain_retrieval_metrics(wh, run_id, baseline, filters)
    frame, retrieval_metrics = _extra_columns(frame, retrieval, "metric", q.RETRIEVAL_PREFIX)
    tools = domain_tool_metrics(wh, run_id, baseline, filters)
    frame, tool_metrics = _extra_columns(frame, tools, "metric", q.TOOLS_PREFIX)
    metrics = [*q.ALL_METRICS, *grader_metrics, *retrieval_metrics, *tool_metrics]
    labels: dict[str, list[str]] = {m: [] for m in metrics}
    flags: dict[str, list[bool | None]] = {m: [] for m in metrics}
    bounds: dict[str, tuple[list[float | None], list[float | None]]] = {
        m: ([], []) for m in metrics
    }
    base = baseline
    deltas = _DomainDeltas(lambda: q.sample_deltas_all(wh, run_id, str(base), filters))
    extra_deltas = {
        q.GRADER_PREFIX: (
            _DomainDeltas(lambda: q.grader_sample_deltas_all(wh, run_id, str(base), filters)),
            "grader",
        ),
        q.RETRIEVAL_PREFIX: (
            _DomainDeltas(lambda: q.retrieval_sample_deltas_all(wh, run_id, str(base), filters)),
            "metric",
        ),
        q.TOOLS_PREFIX: (
            _DomainDeltas(lambda: tool_sample_deltas_all(wh, run_id, str(base), filters)),
            "metric",
        ),
    }
    for row in frame.iter_rows(named=True):
        if baseline is None:
            checks = {m: NoiseCheck("none", note="no baseline") for m in metrics}
        else:
            checks = _noise_for(row, metrics, deltas, extra_deltas)
        for metric, check in checks.items():
            labels[metric].append(check.short_label())
            flags[metric].append(check.beyond_noise)
            bounds[metric][0].append(check.low)
            bounds[metric][1].append(check.high)
    return frame.with_columns(
        *(pl.Series(f"{m}_noise", labels[m], dtype=pl.String) for m in metrics),
        *(pl.Series(f"{m}_beyond_noise", flags[m], dtype=pl.Boolean) for m in metrics),
        *(pl.Series(f"{m}_low", bounds[m][0], dtype=pl.Float64) for m in metrics),
        *(pl.Series(f"{m}_high", bounds[m][1], dtype=pl.Float64) for m in metrics),
    )


@register
def judge_change(wh: Warehouse, run_id: str, baseline: str | None) -> JudgeChange | None:
    """How the run's judge differs from the baseline's, with the drift a check measured;
    None without a baseline or when both runs had the same judge and prompt version."""
    if baseline is None:
        return None
    run, base = drift_run_series(wh, run_id), drift_run_series(wh, baseline)
    if run is None or base is None or run["judge"] == base["judge"]:
        return None
    return judge_change_of(run, base, judge_drift_split(wh, run_id, baseline))


@register
def system_overview(
    wh: Warehouse, run_id: str, baseline: str | None, filters: q.Filters
) -> pl.DataFrame:
    """``overview`` with judge metrics made the system's change (or not comparable) when
    the judge changed: the frame the verdict, movers, table and report read."""
    return system_frame(overview(wh, run_id, baseline, filters), judge_change(wh, run_id, baseline))


@register
def trend_steps(wh: Warehouse, run_ids: tuple[str, ...], metric: str) -> pl.DataFrame:
    """Trends' steps: each run's change of ``metric`` from the run before it in ``run_ids``
    (oldest first), per domain, with its noise interval (``noise_queries.series_steps``)."""
    return series_steps(metric_sample_values(wh, run_ids, metric), run_ids)


@register
def compare_noise(
    wh: Warehouse,
    run_id: str,
    baseline: str,
    metric: str,
    candidate: str | None = None,
    baseline_candidate: str | None = None,
    shared_only: bool = False,
) -> pl.DataFrame:
    """Compare's per-domain noise verdicts: each domain's mean paired change of ``metric``
    (each side its own candidate, or all) with the interval every page uses; with
    ``shared_only``, over the cases both runs scored with the same content."""
    values = pl.concat(
        [
            metric_sample_values(wh, [run_id], metric, candidate),
            metric_sample_values(wh, [baseline], metric, baseline_candidate),
        ]
    )
    if shared_only:
        values = values.filter(pl.col("sample_id").is_in(shared_case_ids(wh, run_id, baseline)))
    return domain_changes(values, run_id, baseline)


@register
def card_noise(wh: Warehouse, run_id: str, baseline: str) -> dict[str, NoiseCheck]:
    """The noise checks of the run header cards' changes against ``baseline``: the paired
    bootstrap over the samples of both runs, as the Overview's."""
    deltas = q.card_sample_deltas(wh, run_id, baseline)
    return {
        metric: bootstrap_check(deltas[metric].cast(pl.Float64).fill_null(np.nan).to_numpy())
        for metric in CARD_NOISE_METRICS
    }


@register
def leaderboard_ratings(wh: Warehouse) -> tuple[pl.DataFrame, int]:
    """The leaderboard with a Bradley–Terry rating per player (``bt``) beside its Elo, and
    the number of games both are fitted on."""
    board = q.leaderboard(wh)
    games = q.rating_games(wh)
    strengths = bradley_terry(
        (str(a), str(b), float(s))
        for a, b, s in games.select("player_a", "player_b", "score_a").rows()
    )
    ratings = board.with_columns(
        pl.when(pl.col("name").is_not_null())
        .then(pl.col("name") + " · " + pl.col("player"))
        .otherwise(pl.col("player"))
        .alias("label"),
        pl.col("player")
        .replace_strict(strengths, default=None, return_dtype=pl.Float64)
        .alias("bt"),
        *(pl.col(c).cast(pl.Int64) for c in ("rank", "games", "wins", "ties", "losses")),
    )
    return ratings, games.height


@register
def sample_detail(wh: Warehouse, ref: q.SampleRef) -> dict[str, pl.DataFrame]:
    """Result row, highlights, claims, attributions, verdicts and grader scores of a sample."""
    return {
        "result": q.sample_result(wh, ref),
        "highlights": q.sample_highlights(wh, ref),
        "claims": q.sample_claims(wh, ref),
        "attributions": q.sample_attributions(wh, ref),
        "verdicts": q.sample_verdicts(wh, ref),
        "graders": q.sample_graders(wh, ref),
    }


@register
def analyst_sql(wh: Warehouse, text: str) -> QueryResult:
    """Analyst SQL in the read-only sandbox with the SQL page's time limit and row cap."""
    return wh.analyst_sql(text, time_limit_s=SQL_TIME_LIMIT_S, row_cap=SQL_ROW_CAP)


def run_sql(text: str) -> QueryResult:
    """Run analyst SQL (``analyst_sql``), refusing over-long text before it reaches DuckDB."""
    if len(text) > SQL_MAX_CHARS:
        raise QueryError(
            f"the query is {len(text):,} characters long; the limit is {SQL_MAX_CHARS:,}"
        )
    return query(analyst_sql, text)
