"""Posting alerts to a webhook: the URL checked before a run, one deadline for a whole pass,
and Slack's markup escaped.

A webhook URL is a credential (a Slack incoming-webhook URL *is* the token), so it is
registered as a secret, never printed or stored: every message names only its host. The
text is escaped as Slack asks (``&``, ``<``, ``>``), so a rule name or a series planted by
whoever writes configs or traces cannot ping the whole channel (``<!channel>``) or dress
a link up as something else (``<https://evil|docs>``).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping
from urllib.parse import urlsplit

from engine.errors import printable
from engine.http import HttpSession, RetryPolicy, SendError, send_with_retries
from engine.secrets import redact, register

WEBHOOK_ENV = "EVALHOUSE_ALERT_WEBHOOK"
"""The webhook of rules that name none (a webhook URL is a credential: keep it out of the
config file when the file is committed)."""

WEBHOOK_POLICY = RetryPolicy(retries=2, timeout_s=10.0, backoff_s=0.5, deadline_s=10.0)
"""Three tries, each answered in full within 10 s (a server that sends one byte every
two seconds is cut off, not waited on)."""

PASS_DEADLINE_S = 30.0
"""Every webhook post of one pass (one run's alerts) together gets this long: the docs'
"about half a minute". A post that finds the time spent fails without being sent."""


def webhook_problem(url: str) -> str | None:
    """Why ``url`` cannot be a webhook (scheme, host, port), or None. The reason never
    repeats the URL: it is a credential."""
    if not url or any(ord(c) < 0x21 or ord(c) == 0x7F for c in url):
        return "must be an http(s) URL without spaces or control characters"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:  # a port out of 0-65535 or not a number, a broken IPv6 host
        text = str(exc)
        if "out of range" in text:
            return "port out of range (1-65535)"
        return "port is not a number" if "Port" in text else "is not a valid URL"
    if parts.scheme not in ("http", "https"):
        return "must be an http(s) URL"
    if not parts.hostname:
        return "names no host"
    if port == 0:
        return "port out of range (1-65535)"
    return None


def webhook_host(url: str) -> str:
    """The one part of a webhook URL fit to print: its host (and port when given)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or "?"
        port = parts.port
    except ValueError:
        return "?"
    return printable(f"{host}:{port}" if port else host)


def slack_escape(text: str) -> str:
    """``text`` with Slack's three control characters escaped, so no part of it becomes a
    mention, a channel-wide ping or a link with a label of someone else's choosing."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class WebhookPass:
    """The webhook posts of one pass, sharing one deadline (:data:`PASS_DEADLINE_S`)."""

    def __init__(self, deadline_s: float | None = None) -> None:
        self.deadline_s = PASS_DEADLINE_S if deadline_s is None else deadline_s
        self.ends = time.monotonic() + self.deadline_s

    def post(self, url: str, text: str, record: Mapping[str, object]) -> str | None:
        """POST ``{"text": ..., "alert": {...}}`` to ``url``; the reason when it failed,
        naming the webhook by its host only."""
        register(url)  # whatever echoes it (a log line, an error) prints ***
        host = webhook_host(url)
        left = self.ends - time.monotonic()
        if left <= 0:
            return f"webhook {host} not sent: this pass's {self.deadline_s:g} s were spent"
        body = json.dumps({"text": slack_escape(text), "alert": dict(record)}, default=str).encode(
            "utf-8"
        )

        async def send() -> None:
            session = HttpSession(max_connections=1)
            try:
                async with asyncio.timeout(left):
                    await send_with_retries(
                        session, url, policy=WEBHOOK_POLICY, content=body,
                        parse=lambda reply: reply.status_code,
                        headers={"content-type": "application/json"}, label=f"webhook {host}",
                    )  # fmt: skip
            finally:
                await session.aclose()

        try:
            asyncio.run(send())
        except SendError as exc:
            return f"webhook {host} failed: {_without(url, str(exc))}"
        except TimeoutError:
            return f"webhook {host} failed: no answer within this pass's {self.deadline_s:g} s"
        return None


def _without(url: str, reason: str) -> str:
    """``reason`` with the URL and its path masked (a transport error may quote either)."""
    path = urlsplit(url).path
    reason = redact(reason).replace(url, "***")
    return printable(reason.replace(path, "/***") if len(path) > 1 else reason)
