"""The ``alerts:`` section of a run config, checked before the run and evaluated after it.

The rules sit beside the run options in the same ``--config`` file but are not one of
them (they watch the series, not the scoring), so ``run_options`` leaves the section to
this module. After the run is ingested each rule is evaluated on the run's metrics;
a state change posts to the webhook, becomes an ``alerts`` lake record and is ingested.
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from pydantic import ValidationError

from evalhouse import home
from evalhouse.config_file import config_file
from evalhouse.console import UsageError, err

if TYPE_CHECKING:
    from engine.alerts import AlertRule
    from engine.settings import Paths

SECTION = "alerts"
"""The key of the rules in a run config."""


def alert_rules(args: argparse.Namespace) -> tuple[AlertRule, ...]:
    """The rules of ``--config`` (none without one); a bad rule is refused (exit 2)."""
    from engine.alerts import AlertRule

    section = config_file(args).get(SECTION) or []
    if not isinstance(section, list):
        raise UsageError(f"{args.config}: '{SECTION}:' must be a list of rules")
    rules = []
    for i, item in enumerate(section):
        try:
            rules.append(AlertRule.model_validate(item))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "rule"
            reason = str(first["msg"]).removeprefix("Value error, ")
            raise UsageError(f"{args.config}: alerts[{i}] {where}: {reason}") from exc
    names = [r.name for r in rules]
    if len(set(names)) != len(names):
        raise UsageError(f"{args.config}: two alert rules share a name")
    if any(r.webhook is None for r in rules):
        _check_env_webhook()
    return tuple(rules)


def _check_env_webhook() -> None:
    """Refuse a malformed ``$EVALHOUSE_ALERT_WEBHOOK`` before the run, not after it; the
    message names the variable and the reason, never the URL (a credential)."""
    from engine.webhooks import WEBHOOK_ENV, webhook_problem

    url = os.environ.get(WEBHOOK_ENV, "").strip()
    problem = webhook_problem(url) if url else None
    if problem is not None:
        raise UsageError(f"${WEBHOOK_ENV}: the webhook {problem}")


def evaluate_alerts(paths: Paths, run_id: str, rules: tuple[AlertRule, ...]) -> int:
    """Evaluate ``rules`` on the ingested run, post and record what changed; the number
    of rules firing after it (changed or still firing)."""
    if not rules:
        return 0
    from engine.alerts import alert_record, decide
    from engine.clock import utcnow
    from engine.lake import write_part
    from engine.webhooks import WebhookPass
    from warehouse.alerts import alert_inputs

    home.ingest_now(paths, quiet=True)  # the run's last records and the latest states
    watched = {r.watches for r in rules}
    inputs = alert_inputs(paths.warehouse, run_id, watched, catalog=home.catalog())
    records = []
    firing = 0
    webhooks = WebhookPass()  # every post of this pass shares one deadline
    for rule in rules:
        key = (rule.name, rule.domain or "")
        value = inputs.values.get(rule.watches)
        state = decide(rule, value, inputs.states.get(key))
        firing += (state == "firing") or (state is None and inputs.states.get(key) == "firing")
        if state is None or value is None:
            continue
        record = alert_record(
            rule, state, value, series=inputs.series, run_id=run_id, now=utcnow(),
            webhooks=webhooks,
        )  # fmt: skip
        err(f"alert {state}: {record.message}")
        if record.error:
            err(f"alert {rule.name!r}: {record.error}")
        records.append(record)
    if records:
        write_part(paths.lake, "alerts", run_id, 0, records)
        home.ingest_now(paths, quiet=True)
    return firing
