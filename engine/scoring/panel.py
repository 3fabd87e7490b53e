"""A judge panel's asks combined into one answer's judge scores.

A run that asks a judge more than once about an answer (``judge_repeats``, iterations) or
asks several judges (a jury) gets one ``results`` row per answer all the same: each
judge's asks are averaged (scores) or put to a vote (pass/fail), then the judges the same
way, so every judge weighs the same however many times it was asked. A tie is not a pass:
a panel split evenly has not passed the answer. What each ask said is kept, one
``judge_asks`` row per metric, for the reliability views.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any

from engine.models import JudgeAskRecord, SampleKey
from engine.models.metrics import JUDGE_METRICS, METRICS, RUBRIC, Scale
from engine.scoring.synthesis import PASS_SCORE

PASS_AT_100 = RUBRIC.to_100(PASS_SCORE)
"""A score passes at or above this in its 0-100 form: 4 on 1-5, the rubric's pass."""

PASSED = "passed"
"""The ``results`` column of the answer's pass/fail."""

PANEL_METRICS: tuple[str, ...] = (
    *(PASSED if metric == "pass_rate" else metric for metric in JUDGE_METRICS),
    "overall",
)
"""The ``results`` columns a judge decides that are combined across asks and kept per ask."""

_SCALES: dict[str, Scale] = {m.column: m.scale for m in METRICS.values() if m.column}

FLAKY_FLAG = "judge_flaky"
"""A judge's asks about the answer disagree on its pass/fail."""
SPLIT_FLAG = "jury_split"
"""The jury's judges disagree on the answer's pass/fail."""


@dataclass(frozen=True)
class Ask:
    """What one ask of one judge gave: the ``results`` fields of its outcome."""

    judge: str
    """The judge's name."""
    ask: int
    """The ask's index among this judge's asks in the iteration, from 0."""
    fields: Mapping[str, Any]
    """The judge outcome's ``result_fields()``."""


def ask_value(metric: str, value: Any) -> tuple[float | None, bool | None]:
    """``value`` of ``metric`` in its 0-100 form and the pass/fail it implies."""
    if value is None:
        return None, None
    if metric == PASSED:
        return (100.0 if value else 0.0), bool(value)
    score = _SCALES[metric].to_100(float(value))
    return score, score >= PASS_AT_100


def majority(votes: Sequence[bool | None]) -> bool | None:
    """True when more votes pass than fail; None without a vote (a tie fails)."""
    cast = [v for v in votes if v is not None]
    if not cast:
        return None
    return sum(cast) > len(cast) - sum(cast)


def _by_judge(asks: Sequence[Ask]) -> dict[str, list[Ask]]:
    grouped: dict[str, list[Ask]] = {}
    for ask in asks:
        grouped.setdefault(ask.judge, []).append(ask)
    return grouped


def combine(asks: Sequence[Ask]) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The combined ``results`` fields (other fields, such as the reasoning, from the first
    ask) and the panel's flags (``judge_flaky``, ``jury_split``)."""
    if not asks:
        raise ValueError("a panel needs at least one ask")
    fields = dict(asks[0].fields)
    grouped = _by_judge(asks)
    for metric in PANEL_METRICS:
        if metric == PASSED:
            continue
        means = [
            fmean(values)
            for judge_asks in grouped.values()
            if (values := [float(a.fields[metric]) for a in judge_asks if _has(a, metric)])
        ]
        if metric in fields or means:
            fields[metric] = fmean(means) if means else None
    votes = {
        judge: majority([a.fields.get(PASSED) for a in judge_asks])
        for judge, judge_asks in grouped.items()
    }
    if any(PASSED in a.fields for a in asks):
        fields[PASSED] = majority(list(votes.values()))
    flags: list[str] = []
    if any(
        len({a.fields.get(PASSED) for a in judge_asks} - {None}) > 1
        for judge_asks in grouped.values()
    ):
        flags.append(FLAKY_FLAG)
    if len(set(votes.values()) - {None}) > 1:
        flags.append(SPLIT_FLAG)
    return fields, tuple(flags)


def _has(ask: Ask, metric: str) -> bool:
    value = ask.fields.get(metric)
    return isinstance(value, int | float) and not isinstance(value, bool)


def ask_records(key: SampleKey, asks: Sequence[Ask]) -> list[JudgeAskRecord]:
    """One ``judge_asks`` row per ask and metric the ask gave."""
    rows = []
    for ask in asks:
        for metric in PANEL_METRICS:
            if metric not in ask.fields:
                continue
            score, passed = ask_value(metric, ask.fields[metric])
            if metric == PASSED and ask.fields.get("judge_faithfulness") is None:
                # An answer that says nothing is not passed by rule, not by the judge: its
                # False would count as every judge agreeing.
                score, passed = None, None
            rows.append(
                JudgeAskRecord(
                    **key.model_dump(),
                    judge=ask.judge,
                    ask=ask.ask,
                    metric=metric,
                    score_100=score,
                    passed=passed,
                )
            )
    return rows
