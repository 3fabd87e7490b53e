"""The retry rules of the one HTTP send-with-retries (:mod:`engine.http`).

Which answers are worth retrying, how long to wait, and how a ``Retry-After`` header is
read; :func:`engine.http.send_with_retries` applies them for judges, embedders and targets.
"""

from __future__ import annotations

import email.utils
import math
import random
import time

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
"""Timeouts, conflicts, rate limits, server errors and Anthropic's 529 (overloaded)."""


def retry_after_seconds(value: str | None, cap: float | None = None) -> float | None:
    """Seconds asked by a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    if math.isnan(seconds):
        return None
    seconds = max(0.0, seconds)
    return seconds if cap is None else min(seconds, cap)


def backoff_delay(
    attempt: int,
    base: float,
    cap: float,
    retry_after: float | None = None,
    retry_after_cap: float | None = None,
) -> float:
    """Seconds to wait before retry ``attempt`` (from 0).

    Exponential from ``base``, capped at ``cap``, with jitter so concurrent callers do not
    retry in lockstep. When the server said how long to wait, that wait (capped at
    ``retry_after_cap``, default ``cap``) plus a little jitter.
    """
    exponential = min(cap, base * 2**attempt)
    if retry_after is not None:
        limit = cap if retry_after_cap is None else retry_after_cap
        return min(limit, retry_after) + random.uniform(0, 0.1 * exponential)
    return random.uniform(0.5 * exponential, exponential)
