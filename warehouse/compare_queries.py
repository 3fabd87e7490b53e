"""Typed queries of the Compare page (``sql/queries/compare_*.sql``): one page of paired
samples with every added run beside the challenger, per-group means and changes of each
compared run, and the fields a run's samples can be grouped by. Registered in
``queries.QUERIES`` like every named query; a module of its own because ``queries`` is long
enough. ``compare_counts`` stays in ``queries``: the CLI's regression gate counts with it."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from warehouse.queries import PAGE_SIZE, Warehouse, check_metric, named_query

GROUP_FIELDS = ("domain", "provider", "tag")
"""The fixed "group by" choices, before the metadata fields (``meta:<field>``)."""

META_PREFIX = "meta:"
"""A "group by" choice naming a field of the cases' metadata."""


def group_label(field: str) -> str:
    """How a "group by" choice reads: ``meta:region`` -> ``region (metadata)``."""
    if field.startswith(META_PREFIX):
        return f"{field.removeprefix(META_PREFIX)} (metadata)"
    return {"provider": "AI provider"}.get(field, field.capitalize())


def _check_group(group: str) -> str:
    if group in GROUP_FIELDS or (group.startswith(META_PREFIX) and len(group) > len(META_PREFIX)):
        return group
    raise ValueError(
        f"unknown group {group!r}; expected one of {', '.join(GROUP_FIELDS)} or meta:<field>"
    )


@named_query
def compare_group_fields(wh: Warehouse, run_id: str) -> list[str]:
    """What the samples of ``run_id`` can be grouped by: ``domain``, ``provider`` (when
    more than one answered), ``tag`` (when any sample has one), then ``meta:<field>`` for
    each field of the cases' metadata, by name."""
    found = set(wh.named("compare_group_fields", run_id=run_id)["field"])
    fixed = [f for f in GROUP_FIELDS if f in found]
    return fixed + sorted(f for f in found if f.startswith(META_PREFIX))


@named_query
def compare_groups(
    wh: Warehouse,
    run_ids: tuple[str, ...],
    baseline_run_id: str,
    *,
    metric: str,
    tolerance: float,
    group: str = "domain",
    candidate: str | None = None,
    baseline_candidate: str | None = None,
) -> pl.DataFrame:
    """Per group of samples (``group``) and per run of ``run_ids`` (the challenger first):
    paired samples, ``mean``, ``baseline_mean`` over the same samples, ``mean_delta``,
    ``worst_delta`` and the improved / regressed / unchanged / not scored counts."""
    if not run_ids:
        raise ValueError("compare_groups needs at least one run")
    return wh.named(
        "compare_groups",
        runs=list(run_ids),
        baseline_run_id=baseline_run_id,
        metric=check_metric(metric),
        tolerance=float(tolerance),
        group=_check_group(group),
        candidate=candidate,
        baseline_candidate=baseline_candidate,
    )


@named_query
def compare_samples(
    wh: Warehouse,
    run_id: str,
    baseline_run_id: str,
    *,
    metric: str,
    tolerance: float,
    candidate: str | None = None,
    baseline_candidate: str | None = None,
    added: Sequence[str] = (),
    shared_only: bool = False,
    status: str | None = None,
    domain: str | None = None,
    group: str = "domain",
    group_value: str | None = None,
    different_only: bool = False,
    limit: int = PAGE_SIZE,
    offset: int = 0,
) -> pl.DataFrame:
    """One page of paired samples, the challenger's largest regression first, with
    ``total_rows``; ``added`` holds, per sample, each added run's score, change and status
    against the baseline (``run_id``, ``score``, ``delta``, ``status``); ``group_value`` is
    the sample's value of ``group``. ``different_only`` keeps the samples whose score moved
    beyond ``tolerance``, or whose answer or scoredness differs, in any compared run; with
    ``shared_only``, only the cases both runs scored with the same content."""
    return wh.named(
        "compare_samples",
        run_id=run_id,
        baseline_run_id=baseline_run_id,
        metric=check_metric(metric),
        tolerance=float(tolerance),
        candidate=candidate,
        baseline_candidate=baseline_candidate,
        added=list(added),
        shared_only=bool(shared_only),
        status=status,
        domain=domain,
        group=_check_group(group),
        group_value=group_value,
        different_only=bool(different_only),
        limit=limit,
        offset=offset,
    )
