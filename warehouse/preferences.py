"""The rows ``evalhouse export RUN --format dpo`` turns into preference pairs, read with
SQL (``sql/queries/preference_*.sql``): position-consistent head-to-head judgments and
pairs of reviewed answers. Turning them into pairs is ``engine.preferences``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from warehouse import queries
from warehouse.catalog import Catalog
from warehouse.queries import Warehouse


@dataclass(frozen=True)
class PreferenceRows:
    """What the warehouse holds for one run (or comparison) id."""

    pairwise: list[dict[str, Any]]
    """Decided, position-consistent judgments with the question and both answers."""
    reviews: list[dict[str, Any]]
    """Pairs of reviewed answers to one question, the higher-graded first."""
    known: bool
    """Whether the id names a run or a comparison in the warehouse at all."""


def read_preference_rows(
    path: Path, run_id: str, *, catalog: Catalog | None = None
) -> PreferenceRows:
    """The preference rows of ``run_id`` (a run id or a ``compare-runs`` comparison id)."""
    warehouse = Warehouse(path, catalog=catalog)
    with warehouse.session():
        pairwise = queries.preference_pairwise(warehouse, run_id).to_dicts()
        reviews = queries.preference_reviews(warehouse, run_id).to_dicts()
        known = warehouse.sql(
            "SELECT (SELECT count(*) FROM runs WHERE run_id = $run_id)"
            " + (SELECT count(*) FROM pairwise WHERE comparison_id = $run_id) AS n",
            {"run_id": run_id},
        ).frame["n"][0]
    return PreferenceRows(pairwise, reviews, bool(known))
