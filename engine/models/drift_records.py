"""Records of judge drift (lake and warehouse tables ``drift_anchors`` and ``judge_drift``,
registered in ``LAKE_TABLES``): which earlier answers a series re-judges when its judge
changes, and how far the scores moved on them."""

from __future__ import annotations

from datetime import datetime

from engine.models.base import Frozen


class DriftAnchorRecord(Frozen):
    """One anchor of a series: an earlier case whose stored answer is re-judged whenever the
    series' judge changes. Written once per series and never again, so every later check
    scores the same answers."""

    run_id: str
    """The run whose cases and stored answers the anchors are (the series' first baseline)."""
    series: str
    """The series the anchors belong to."""
    sample_id: str
    """The anchor case's id in that run."""
    domain: str
    """The case's domain (anchors are drawn evenly across domains)."""
    frozen_at: datetime
    """When the anchor set was chosen (UTC, naive)."""


class JudgeDriftRecord(Frozen):
    """How much one metric moved when the anchors were judged by a new judge instead of the
    old one: the mean paired difference (new - old) on the same answers, with its 95%
    interval, on the 0-100 scale Trends uses."""

    check_id: str
    """Id of the drift check (one per check, shared by its metrics)."""
    run_id: str | None = None
    """The run whose judge differs from its baseline's; null for an ``evalhouse drift`` check
    of a judge spec that has not run yet."""
    baseline_run_id: str | None = None
    """The run whose judge is the old one (the baseline, or ``--against``)."""
    series: str
    """The series whose anchors were re-judged."""
    anchor_run_id: str
    """The run the anchors' answers come from."""
    metric: str
    """The metric (a Trends metric name, for example ``judge_faithfulness``)."""
    old_judge: str
    """The old judge with its prompt version (``openai:gpt-4o-mini@v1``)."""
    new_judge: str
    """The new judge with its prompt version."""
    mean_shift: float
    """Mean of new - old over the anchors both judges scored (0-100 points)."""
    ci_low: float | None = None
    """Lower end of the shift's 95% t-interval; null with fewer than two anchors."""
    ci_high: float | None = None
    """Upper end of the shift's 95% t-interval; null with fewer than two anchors."""
    n: int
    """Anchors both judges scored on this metric."""
    checked_at: datetime
    """When the check ran (UTC, naive)."""
