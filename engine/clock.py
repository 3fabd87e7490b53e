"""Now, in naive UTC: how every record, state and review is dated (the lake stores naive
UTC timestamps, so every writer takes its time from here)."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    """Now, in naive UTC (how every record is dated)."""
    return datetime.now(UTC).replace(tzinfo=None)
