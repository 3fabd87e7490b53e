"""What alert rules are evaluated against, read with SQL: a run's series, its metrics
(whole run: ``check_metrics``; one domain: ``alert_domain_metric``) and each rule's latest
state in the series (``alert_states``), all typed queries of ``warehouse.queries``."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from engine.models import ANALYZER_METRICS
from warehouse import queries
from warehouse.catalog import Catalog
from warehouse.queries import Warehouse


@dataclass(frozen=True)
class AlertInputs:
    """A run's series, metric values and the rules' latest states."""

    series: str
    values: dict[tuple[str, str], float | None]
    """(metric, domain or '') -> the run's value (None: the run has no such value)."""
    states: dict[tuple[str, str], str]
    """(rule, domain or '') -> its latest state in the series."""


def alert_inputs(
    path: Path, run_id: str, watched: Iterable[tuple[str, str]], *, catalog: Catalog | None
) -> AlertInputs:
    """The values of ``watched`` (metric, domain or '') in ``run_id`` and the states of
    its series; a domain is watched only for analyzer metrics."""
    warehouse = Warehouse(path, catalog=catalog)
    with warehouse.session():
        frame = warehouse.sql(
            "SELECT series FROM run_series WHERE run_id = $run_id", {"run_id": run_id}
        ).frame
        series = str(frame["series"][0]) if frame.height else run_id
        run_metrics = queries.check_metrics(warehouse, run_id)
        values: dict[tuple[str, str], float | None] = {}
        for metric, domain in watched:
            if not domain:
                values[(metric, domain)] = run_metrics.get(metric)
                continue
            if metric not in ANALYZER_METRICS:
                values[(metric, domain)] = None
                continue
            values[(metric, domain)] = queries.alert_domain_metric(
                warehouse, run_id, metric, domain
            )
        states = queries.alert_states(warehouse, series)
    return AlertInputs(series, values, states)
