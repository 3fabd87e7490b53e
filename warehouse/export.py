"""The rows ``evalhouse export`` writes: a run's samples, scores and claims, read with SQL.

Only the reading lives here (``sql/queries/export_*.sql``); turning the rows into a peer's
format is pure formatting in ``engine.testsets.export``, wired by the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from warehouse import queries
from warehouse.catalog import Catalog
from warehouse.queries import Warehouse


@dataclass(frozen=True)
class RunExport:
    """Everything the warehouse holds about one run's samples, as plain values."""

    run_id: str
    name: str
    test_set: str
    """Path of the test set the run read (it may have moved since)."""
    test_set_hash: str
    config: str
    """The run's ``RunConfig`` as JSON."""
    samples: list[dict[str, Any]]
    """One dict per sample (first iteration), ordered by ``sample_id``."""
    claims: dict[str, list[dict[str, Any]]]
    """Expected claims per ``sample_id``, in claim order."""
    cases: dict[str, str]
    """The cases the run kept (``sample_id -> case JSON``; empty for older runs)."""


class RunNotFound(LookupError):
    """The run is not in the warehouse, or has no samples for the candidate."""


def read_run_export(
    path: Path, run_id: str, candidate: str = "", *, catalog: Catalog | None = None
) -> RunExport:
    """The samples, scores and claims of ``run_id`` (one candidate lane, default the
    recorded/target lane ``''``); raises ``RunNotFound`` when there is nothing to export."""
    warehouse = Warehouse(path, catalog=catalog)
    run = queries.export_run(warehouse, run_id)
    if run.is_empty():
        raise RunNotFound(f"run {run_id!r} is not in the warehouse (did ingest run?)")
    samples = queries.export_samples(warehouse, run_id, candidate)
    if samples.is_empty():
        raise RunNotFound(
            f"run {run_id!r} has no samples for candidate {candidate!r} (see --candidate)"
        )
    claims: dict[str, list[dict[str, Any]]] = {}
    for row in queries.export_claims(warehouse, run_id, candidate).to_dicts():
        claims.setdefault(str(row["sample_id"]), []).append(row)
    head = run.to_dicts()[0]
    return RunExport(
        run_id=run_id,
        name=str(head["name"]),
        test_set=str(head["test_set"] or ""),
        test_set_hash=str(head["test_set_hash"] or ""),
        config=str(head["config"] or "{}"),
        samples=samples.to_dicts(),
        claims=claims,
        cases=queries.export_cases(warehouse, run_id),
    )
