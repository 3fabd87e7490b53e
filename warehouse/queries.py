"""Typed query functions: one per named SQL file, each returning a polars DataFrame.

Pages, the CLI and tests call these; nobody else writes SQL against the warehouse
(except analysts, through ``evalhouse sql`` and the SQL page, sandboxed by
``db.read_connection``). Values are always bound as ``$name`` parameters.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import polars as pl

from warehouse.db import (
    QueryError,
    QueryResult,
    check_query,
    read_connection,
    redact_paths,
    run_query,
)


@cache
def sql_file(name: str) -> str:
    """The text of ``warehouse/sql/queries/<name>.sql``."""
    return (resources.files("warehouse") / "sql" / "queries" / f"{name}.sql").read_text("utf-8")


class Warehouse:
    """The read facade over one warehouse file: short-lived read-only connections."""

    def __init__(self, path: Path, *, wait_s: float = 30.0) -> None:
        self.path = path
        self.wait_s = wait_s

    def named(self, name: str, **params: Any) -> pl.DataFrame:
        """Run the named query file with bound parameters."""
        return self.sql(sql_file(name), params).frame

    def sql(
        self,
        text: str,
        params: Mapping[str, Any] | None = None,
        *,
        time_limit_s: float = 30.0,
        row_cap: int | None = None,
    ) -> QueryResult:
        """Run read-only queries in the sandbox (no file access, configuration locked, no
        function that reveals the server's files; see ``db.check_query``)."""
        with read_connection(self.path, wait_s=self.wait_s) as con:
            try:
                check_query(con, text)
                return run_query(con, text, params, time_limit_s=time_limit_s, row_cap=row_cap)
            except QueryError as exc:
                raise QueryError(redact_paths(str(exc), self.path)) from exc

    def data_version(self) -> str:
        """Changes whenever ingest loads something: keys the dashboard's caches."""
        if not self.path.exists():
            return "missing"
        frame = self.sql(
            "SELECT count(*) AS n, max(ingested_at)::VARCHAR AS at FROM ingested_files"
        ).frame
        return f"{frame['n'][0]}:{frame['at'][0]}"

    # ------------------------------------------------------------------ named queries

    def runs(self) -> pl.DataFrame:
        """Every run, newest first, with headline numbers (``run_summary``)."""
        return self.named("runs")

    def previous_run(self, run_id: str) -> str | None:
        """The run that started just before ``run_id``, if any."""
        frame = self.named("previous_run", run_id=run_id)
        return None if frame.is_empty() else str(frame["run_id"][0])

    def domain_overview(self, run_id: str, baseline_run_id: str | None) -> pl.DataFrame:
        """Per-domain means of a run, the baseline's means and the deltas."""
        return self.named("domain_overview", run_id=run_id, baseline_run_id=baseline_run_id)

    def tier_distribution(self, run_id: str) -> pl.DataFrame:
        """Rows per (domain, metric, tier) of a run."""
        return self.named("tier_distribution", run_id=run_id)

    def table_counts(self) -> pl.DataFrame:
        """Approximate rows per table."""
        return self.named("table_counts")

    def run_exists(self, run_id: str) -> bool:
        """Whether the warehouse knows the run."""
        return bool(self.named("run_exists", run_id=run_id)["known"][0])

    def run_candidates(self, run_id: str) -> list[str]:
        """The candidate lanes of a run that have results (``''`` is the recorded/target
        lane)."""
        frame = self.named("run_candidates", run_id=run_id)
        return [str(c) for c in frame["candidate"]]

    def check_metrics(self, run_id: str, candidate: str | None = None) -> dict[str, float | None]:
        """Mean of every gateable metric of a run: analyzer, judge, RAG, pass/error rates,
        and ``grader:<id>`` for each grader."""
        frame = self.named("check_metrics", run_id=run_id, candidate=candidate)
        return {str(m): (None if v is None else float(v)) for m, v in frame.iter_rows()}

    def check_regressions(
        self, run_id: str, baseline_run_id: str, tolerance: float, candidate: str | None = None
    ) -> pl.DataFrame:
        """Samples whose analyzer metrics fell by more than ``tolerance`` points."""
        return self.named(
            "check_regressions",
            run_id=run_id,
            baseline_run_id=baseline_run_id,
            tolerance=tolerance,
            candidate=candidate,
        )
