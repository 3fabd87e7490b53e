"""Secrets the run resolved, masked wherever text leaves the process.

Every place that reads a secret (an API key from the environment, an ``{{env.NAME}}``
value put into a header, credentials in a URL) registers it here; every error text that
may reach a record, a file or a log goes through ``redact``.
"""

from __future__ import annotations

import threading

MASK = "***"
_MIN_LENGTH = 4
"""Shorter values are not masked: they would blank ordinary words."""

_lock = threading.Lock()
_secrets: set[str] = set()


def register(value: str | None) -> None:
    """Remember ``value`` as a secret (ignored when empty or very short)."""
    if value and len(value) >= _MIN_LENGTH:
        with _lock:
            _secrets.add(value)


def redact(text: str) -> str:
    """``text`` with every registered secret replaced by ``***``, longest first."""
    with _lock:
        known = sorted(_secrets, key=len, reverse=True)
    for secret in known:
        if secret in text:
            text = text.replace(secret, MASK)
    return text
