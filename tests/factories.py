"""Small builders of valid records for tests: every field has a sensible default."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from engine.models import ResultRecord, RunRecord

T0 = datetime(2026, 11, 1, 9, 0)


def run_record(run_id: str, started_at: datetime = T0, **over: Any) -> RunRecord:
    """A completed run state."""
    fields: dict[str, Any] = {
        "run_id": run_id,
        "name": f"run {run_id}",
        "started_at": started_at,
        "finished_at": started_at,
        "status": "completed",
        "iterations": 1,
        "test_set": "tests.jsonl",
        "config": "{}",
        "judge": "local",
        "embedder": "local",
        "version": "test",
        "updated_at": started_at,
    }
    fields.update(over)
    return RunRecord(**fields)


def result_record(run_id: str, sample_id: str, **over: Any) -> ResultRecord:
    """A scored result; tiers follow the default thresholds unless given."""
    from engine.models import TierThresholds

    tiers = TierThresholds()
    fields: dict[str, Any] = {
        "run_id": run_id,
        "iteration": 1,
        "sample_id": sample_id,
        "domain": "acme.example",
        "ai_provider": "gpt-x",
        "query": "q",
        "response": "r",
        "accuracy": 80.0,
        "completeness": 60.0,
        "attribution": 75.0,
        "scored_at": T0,
    }
    fields.update(over)
    for metric in ("accuracy", "completeness", "attribution"):
        key = f"{metric}_tier"
        if key not in over and fields[metric] is not None:
            fields[key] = tiers.tier(fields[metric])
    return ResultRecord(**fields)
