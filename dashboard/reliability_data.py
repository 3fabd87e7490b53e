"""Agreement computed for the pages from the warehouse's asks and reviews: Krippendorff's
alpha between a judge's repeated asks, and between reviewers; registered with the one
cache of ``dashboard.data``."""

from __future__ import annotations

from typing import Any

import polars as pl

from dashboard.data import register
from engine.reliability import Level, krippendorff_alpha
from warehouse import reliability_queries as rq
from warehouse.queries import Warehouse

REVIEW_LEVELS: dict[str, Level] = {"response": "ordinal", "claim": "nominal", "verdict": "nominal"}
"""How reviewers' labels of each kind of item are compared: a response's correct > partly >
incorrect is ordered; a claim's found / missing / contradicted and a verdict's agree /
disagree are categories."""


@register
def judge_alpha(wh: Warehouse, run_id: str) -> pl.DataFrame:
    """Per judge and metric of ``run_id``: Krippendorff's alpha (interval, on 0-100) of the
    asks about each answer, with the answers that had two asks or more."""
    asks = rq.judge_ask_values(wh, run_id)
    rows: list[dict[str, Any]] = []
    for (judge, metric), group in asks.group_by("judge", "metric", maintain_order=True):
        units = [list(values) for values in group.group_by("unit").agg("score_100")["score_100"]]
        rows.append(
            {
                "judge": judge,
                "metric": metric,
                "answers": sum(1 for u in units if len(u) > 1),
                "alpha": krippendorff_alpha(units, "interval"),
            }
        )
    return pl.DataFrame(
        rows,
        schema={
            "judge": pl.String,
            "metric": pl.String,
            "answers": pl.Int64,
            "alpha": pl.Float64,
        },
    )


@register
def reviewer_alpha(wh: Warehouse, run_ids: tuple[str, ...] = ()) -> pl.DataFrame:
    """Per kind of item reviewed twice or more (of ``run_ids``; all when empty):
    Krippendorff's alpha between reviewers, with its level, items and reviewers."""
    reviews = rq.reviewer_units(wh, run_ids)
    rows: list[dict[str, Any]] = []
    for (item,), group in reviews.group_by("item", maintain_order=True):
        units = [list(values) for values in group.group_by("unit").agg("value")["value"]]
        level = REVIEW_LEVELS.get(str(item), "nominal")
        rows.append(
            {
                "item": item,
                "level": level,
                "items": len(units),
                "reviewers": group["reviewer"].n_unique(),
                "alpha": krippendorff_alpha(units, level),
            }
        )
    return pl.DataFrame(
        rows,
        schema={
            "item": pl.String,
            "level": pl.String,
            "items": pl.Int64,
            "reviewers": pl.Int64,
            "alpha": pl.Float64,
        },
    )
