"""What alert rules are evaluated against, read with SQL: a run's series, its metrics
(whole run: ``check_metrics``; one domain: ``alert_domain_metric``) and each rule's latest
state in the series (``alert_states``), all typed queries of ``warehouse.queries``."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from engine.models import ANALYZER_METRICS
from engine.noise import bootstrap_check
from warehouse import queries
from warehouse.catalog import Catalog
from warehouse.queries import Warehouse


@dataclass(frozen=True)
class AlertInputs:
    """A run's series, metric values and the rules' latest states."""

    series: str
    values: dict[tuple[str, str, bool], float | None]
    """(metric, domain or '', against the baseline) -> the run's value: the metric, or the
    upper end of the 95% interval of its change against the baseline (None: no value)."""
    states: dict[tuple[str, str], str]
    """(rule, domain or '') -> its latest state in the series."""


def change_upper_bound(
    warehouse: Warehouse, run_id: str, baseline: str | None, metric: str, domain: str
) -> float | None:
    """Upper end of the 95% interval of the change of ``metric`` from ``baseline`` to
    ``run_id`` over their paired samples (the Overview's paired bootstrap); None without a
    baseline or enough pairs."""
    if baseline is None:
        return None
    now = queries.alert_sample_values(warehouse, run_id, metric, domain)
    before = queries.alert_sample_values(warehouse, baseline, metric, domain)
    paired = now.join(before, on=["sample_id", "candidate"], suffix="_baseline").drop_nulls()
    deltas = (paired["value"] - paired["value_baseline"]).cast(pl.Float64).to_numpy()
    return bootstrap_check(np.asarray(deltas)).high


def alert_inputs(
    path: Path, run_id: str, watched: Iterable[tuple[str, str, bool]], *, catalog: Catalog | None
) -> AlertInputs:
    """The values of ``watched`` (metric, domain or '', against the baseline) in ``run_id``
    and the states of its series; a domain threshold watches analyzer metrics only."""
    warehouse = Warehouse(path, catalog=catalog)
    with warehouse.session():
        frame = warehouse.sql(
            "SELECT series, baseline_run_id FROM run_series WHERE run_id = $run_id",
            {"run_id": run_id},
        ).frame
        series = str(frame["series"][0]) if frame.height else run_id
        baseline = frame["baseline_run_id"][0] if frame.height else None
        run_metrics = queries.check_metrics(warehouse, run_id)
        values: dict[tuple[str, str, bool], float | None] = {}
        for metric, domain, against_baseline in watched:
            key = (metric, domain, against_baseline)
            if against_baseline:
                values[key] = change_upper_bound(warehouse, run_id, baseline, metric, domain)
            elif not domain:
                values[key] = run_metrics.get(metric)
            elif metric not in ANALYZER_METRICS:
                values[key] = None
            else:
                values[key] = queries.alert_domain_metric(warehouse, run_id, metric, domain)
        states = queries.alert_states(warehouse, series)
    return AlertInputs(series, values, states)
