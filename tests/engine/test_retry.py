"""The shared retry policy: Retry-After parsing and backoff bounds."""

from __future__ import annotations

import email.utils
import time

from engine.retry import RETRY_STATUS, backoff_delay, retry_after_seconds


def test_retry_after_forms() -> None:
    assert retry_after_seconds("3") == 3.0
    assert retry_after_seconds(" 1.5 ") == 1.5
    assert retry_after_seconds("-4") == 0.0
    assert retry_after_seconds("nan") is None
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds(None) is None
    assert retry_after_seconds("120", cap=60.0) == 60.0
    future = email.utils.formatdate(time.time() + 30, usegmt=True)
    got = retry_after_seconds(future)
    assert got is not None and 25 <= got <= 31


def test_backoff_grows_with_jitter_and_caps() -> None:
    for attempt, upper in [(0, 0.5), (1, 1.0), (2, 2.0), (10, 30.0)]:
        delays = {backoff_delay(attempt, 0.5, 30.0) for _ in range(50)}
        assert all(upper / 2 <= d <= upper for d in delays)
        assert len(delays) > 1  # jitter: concurrent callers spread out


def test_server_wait_is_honoured_up_to_its_cap() -> None:
    assert 2.0 <= backoff_delay(0, 0.5, 30.0, retry_after=2.0) <= 2.05
    assert 10.0 <= backoff_delay(0, 0.5, 10.0, retry_after=100.0) < 10.1
    assert 60.0 <= backoff_delay(0, 0.5, 30.0, retry_after=100.0, retry_after_cap=60.0) < 60.1
    assert {429, 500, 503} <= RETRY_STATUS and 404 not in RETRY_STATUS
