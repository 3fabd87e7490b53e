"""Alert rules evaluated after each run: a threshold on a metric, for the whole run or one
domain, per series. A rule that begins to fire posts once to its webhook (a JSON body
whose ``text`` field is what Slack's incoming webhooks show) and writes an ``alerts`` row;
while it keeps firing, later runs stay quiet; when the metric comes back it posts and
writes a ``cleared`` row. That is what the person on call wants at 3 a.m.: one message
per breach, and one when it is over, not one per run.

The rule's state is the warehouse's latest ``alerts`` row for (series, rule, domain); the
command line reads it, calls :func:`decide`, and writes the records with the lake like any
other table.
"""

from __future__ import annotations

import os
import uuid
from datetime import datetime
from typing import Literal

from pydantic import Field, model_validator

from engine.models import ANALYZER_METRICS, AlertRecord
from engine.models.base import Frozen
from engine.webhooks import WEBHOOK_ENV, WebhookPass, webhook_problem


class AlertRule(Frozen):
    """One rule of the ``alerts:`` section of a run config."""

    name: str = Field(min_length=1, max_length=200)
    """Names the rule in messages and in the ``alerts`` table."""
    metric: str = Field(min_length=1)
    """A metric ``evalhouse check`` knows (``accuracy``, ``pass_rate``, ``error_rate``...);
    with ``domain``, one of the analyzer metrics."""
    domain: str | None = None
    """Watch this domain's mean only (default: the whole run)."""
    min: float | None = None
    """Fire when the metric is below this."""
    max: float | None = None
    """Fire when the metric is above this (``error_rate``, ``cost_usd``...)."""
    worse_than_baseline: bool = False
    """Fire when the metric is worse than in the series' baseline run beyond noise: the
    95% interval of the paired per-sample change lies below zero (the Overview's test).
    Instead of min and max; one of ``REGRESSION_METRICS``."""
    webhook: str | None = None
    """Where to post (default: the ``EVALHOUSE_ALERT_WEBHOOK`` variable; none: the table
    row only)."""

    @model_validator(mode="after")
    def _one_threshold(self) -> AlertRule:
        given = (self.min is not None) + (self.max is not None) + self.worse_than_baseline
        if given != 1:
            raise ValueError(
                f"alert {self.name!r}: give exactly one of min, max or worse_than_baseline"
            )
        if self.worse_than_baseline and self.metric not in REGRESSION_METRICS:
            raise ValueError(
                f"alert {self.name!r}: worse_than_baseline watches one of "
                f"{', '.join(REGRESSION_METRICS)}"
            )
        if (
            self.domain is not None
            and not self.worse_than_baseline
            and self.metric not in ANALYZER_METRICS
        ):
            raise ValueError(
                f"alert {self.name!r}: a domain rule watches one of {', '.join(ANALYZER_METRICS)}"
            )
        problem = None if self.webhook is None else webhook_problem(self.webhook)
        if problem is not None:  # the reason only: the URL is a credential
            raise ValueError(f"alert {self.name!r}: webhook {problem}")
        return self

    @property
    def watches(self) -> tuple[str, str, bool]:
        """(metric, domain or '', against the baseline): what the rule reads of a run."""
        return self.metric, self.domain or "", self.worse_than_baseline

    @property
    def kind(self) -> Literal["min", "max", "worse_than_baseline"]:
        """What the rule tests (``AlertRecord.kind``)."""
        if self.worse_than_baseline:
            return "worse_than_baseline"
        return "min" if self.min is not None else "max"

    @property
    def threshold(self) -> float:
        """The minimum or maximum (0 for a change against the baseline)."""
        if self.worse_than_baseline:
            return 0.0
        return self.min if self.min is not None else float(self.max or 0.0)

    def breached(self, value: float) -> bool:
        """Whether ``value`` is on the wrong side of the threshold; for a change against the
        baseline, ``value`` is the upper end of its 95% interval."""
        if self.worse_than_baseline:
            return value < 0.0
        return value < self.min if self.min is not None else value > float(self.max or 0.0)


REGRESSION_METRICS = (
    *ANALYZER_METRICS,
    "judge_faithfulness",
    "judge_completeness",
    "claim_faithfulness",
    "rag_overall",
    "overall",
)
"""Per-sample metrics a ``worse_than_baseline`` rule can watch (higher is better in each)."""

State = Literal["firing", "cleared"]


def decide(rule: AlertRule, value: float | None, previous: str | None) -> State | None:
    """The new state of ``rule`` given the run's ``value`` and its latest state, or None
    when nothing changed (a metric the run lacks changes nothing)."""
    if value is None:
        return None
    if rule.breached(value):
        return None if previous == "firing" else "firing"
    return "cleared" if previous == "firing" else None


def message(rule: AlertRule, state: State, value: float, series: str, run_id: str) -> str:
    """The one line a person reads in the channel."""
    where = f" on {rule.domain}" if rule.domain else ""
    if rule.worse_than_baseline:
        if state == "firing":
            return (
                f":rotating_light: evalhouse alert {rule.name!r}: {rule.metric}{where} is worse "
                f"than the baseline beyond noise (95% interval of the change ends at "
                f"{value:+.3g}) in series {series!r} (run {run_id})"
            )
        return (
            f":white_check_mark: evalhouse alert {rule.name!r} cleared: {rule.metric}{where} "
            f"is no longer worse than the baseline beyond noise in series {series!r} "
            f"(run {run_id})"
        )
    bound = f"minimum {rule.min:g}" if rule.min is not None else f"maximum {rule.max:g}"
    if state == "firing":
        side = "below the" if rule.min is not None else "above the"
        return (
            f":rotating_light: evalhouse alert {rule.name!r}: {rule.metric}{where} is "
            f"{value:.4g}, {side} {bound}, in series {series!r} (run {run_id})"
        )
    return (
        f":white_check_mark: evalhouse alert {rule.name!r} cleared: {rule.metric}{where} is "
        f"{value:.4g} again ({bound}) in series {series!r} (run {run_id})"
    )


def alert_record(
    rule: AlertRule,
    state: State,
    value: float,
    *,
    series: str,
    run_id: str,
    now: datetime,
    webhooks: WebhookPass,
) -> AlertRecord:
    """The record of a state change, posted to the rule's webhook first (within the
    pass's deadline ``webhooks``)."""
    text = message(rule, state, value, series, run_id)
    record = AlertRecord(
        alert_id=uuid.uuid4().hex, run_id=run_id, series=series, rule=rule.name,
        metric=rule.metric, domain=rule.domain, state=state, value=value,
        threshold=rule.threshold, kind=rule.kind, message=text, evaluated_at=now,
    )  # fmt: skip
    url = rule.webhook or os.environ.get(WEBHOOK_ENV, "").strip()
    if not url:
        return record
    error = webhooks.post(url, text, record.model_dump(mode="json"))
    return record.model_copy(update={"notified": error is None, "error": error})
