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

import asyncio
import json
import os
import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Literal

from pydantic import Field, model_validator

from engine.http import HttpSession, RetryPolicy, SendError, send_with_retries
from engine.models import ANALYZER_METRICS, AlertRecord
from engine.models.base import Frozen

WEBHOOK_ENV = "EVALHOUSE_ALERT_WEBHOOK"
"""The webhook of rules that name none (a webhook URL is a credential: keep it out of the
config file when the file is committed)."""

WEBHOOK_POLICY = RetryPolicy(retries=2, timeout_s=10.0, backoff_s=0.5)
"""A webhook gets three tries within about half a minute; a run never waits longer."""


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
    webhook: str | None = None
    """Where to post (default: the ``EVALHOUSE_ALERT_WEBHOOK`` variable; none: the table
    row only)."""

    @model_validator(mode="after")
    def _one_threshold(self) -> AlertRule:
        if (self.min is None) == (self.max is None):
            raise ValueError(f"alert {self.name!r}: give exactly one of min or max")
        if self.domain is not None and self.metric not in ANALYZER_METRICS:
            raise ValueError(
                f"alert {self.name!r}: a domain rule watches one of {', '.join(ANALYZER_METRICS)}"
            )
        if self.webhook is not None and not self.webhook.startswith(("http://", "https://")):
            raise ValueError(f"alert {self.name!r}: webhook must be an http(s) URL")
        return self

    @property
    def threshold(self) -> float:
        """The minimum or maximum."""
        return self.min if self.min is not None else float(self.max or 0.0)

    def breached(self, value: float) -> bool:
        """Whether ``value`` is on the wrong side of the threshold."""
        return value < self.min if self.min is not None else value > float(self.max or 0.0)


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


def post(url: str, text: str, record: Mapping[str, object]) -> str | None:
    """POST ``{"text": ..., "alert": {...}}`` to ``url``; the reason when it failed."""
    body = json.dumps({"text": text, "alert": dict(record)}, default=str).encode("utf-8")

    async def send() -> None:
        session = HttpSession(max_connections=1)
        await send_with_retries(
            session, url, policy=WEBHOOK_POLICY, parse=lambda reply: reply.status_code,
            content=body, headers={"content-type": "application/json"}, label="alert webhook",
        )  # fmt: skip

    try:
        asyncio.run(send())
    except SendError as exc:
        return str(exc)
    return None


def alert_record(
    rule: AlertRule, state: State, value: float, *, series: str, run_id: str, now: datetime
) -> AlertRecord:
    """The record of a state change, posted to the rule's webhook first."""
    text = message(rule, state, value, series, run_id)
    record = AlertRecord(
        alert_id=uuid.uuid4().hex, run_id=run_id, series=series, rule=rule.name,
        metric=rule.metric, domain=rule.domain, state=state, value=value,
        threshold=rule.threshold, message=text, evaluated_at=now,
    )  # fmt: skip
    url = rule.webhook or os.environ.get(WEBHOOK_ENV, "").strip()
    if not url:
        return record
    error = post(url, text, record.model_dump(mode="json"))
    return record.model_copy(update={"notified": error is None, "error": error})
