"""The target seam: where the responses a run scores come from.

A target turns a test case into a ``TargetResponse``: the recorded answer of the test
set, a chat model's answer, or an HTTP endpoint's. Its latency, tokens and cost are
recorded apart from the judge's. HTTP targets share ``post_json_with_retries``: a
timeout per request, and retries with exponential backoff on 429, 5xx, timeouts and
connection errors, honouring ``Retry-After``.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import httpx

from engine.errors import InputError
from engine.models import TestCase
from engine.retry import RETRY_STATUS, backoff_delay
from engine.retry import retry_after_seconds as _retry_after_seconds

MAX_RETRY_AFTER_S = 60.0
"""Longest ``Retry-After`` honoured; a server asking for more is waited on this long."""


class TargetError(Exception):
    """The target gave no usable answer for one case; the sample becomes an error row."""


class TargetConfigError(TargetError, InputError):
    """The target spec or its options are wrong; nothing can be run (exit code 2)."""


@dataclass(frozen=True)
class TargetResponse:
    """What a target answered for one case, and what it cost."""

    text: str
    """The response to score."""
    contexts: tuple[str, ...] | None = None
    """Passages the target says it retrieved; None when it returned none."""
    latency_ms: float | None = None
    """Wall time of the successful call (None for recorded responses)."""
    input_tokens: int | None = None
    """Tokens sent to the target model, when it reports them."""
    output_tokens: int | None = None
    """Tokens the target model produced, when it reports them."""
    cost_usd: float = 0.0
    """Cost of the call in US dollars (0 when unknown or free)."""
    calls: int = 0
    """HTTP requests made, retries included."""


@runtime_checkable
class Target(Protocol):
    """Something that answers test cases."""

    @property
    def name(self) -> str:
        """Recorded with the run: ``recorded``, ``openai:gpt-4o-mini@system.v1``, ``http:URL``."""
        ...

    async def respond(self, case: TestCase) -> TargetResponse:
        """Answer one case; raises ``TargetError`` when no answer can be had."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


@dataclass(frozen=True)
class RetryPolicy:
    """How HTTP targets wait and retry."""

    retries: int = 2
    """Retries after the first attempt."""
    timeout_s: float = 60.0
    """Time limit of one request."""
    backoff_s: float = 0.5
    """First backoff; doubled on every retry, with jitter, capped at 30 s."""


DEFAULT_POLICY = RetryPolicy()
"""Two retries, 60 s per request, 0.5 s first backoff."""


def retry_after_seconds(value: str | None) -> float | None:
    """Seconds asked by a ``Retry-After`` header, at most ``MAX_RETRY_AFTER_S``."""
    return _retry_after_seconds(value, cap=MAX_RETRY_AFTER_S)


@dataclass(frozen=True)
class HttpResult:
    """A successful JSON answer with its timing."""

    payload: Any
    latency_ms: float
    calls: int


async def post_json_with_retries(
    client: httpx.AsyncClient,
    url: str,
    *,
    body: bytes,
    headers: dict[str, str],
    policy: RetryPolicy,
    what: str,
    method: str = "POST",
) -> HttpResult:
    """POST ``body`` (or send it with ``method``; GET sends none) and parse the JSON
    answer, retrying transient failures.

    Raises ``TargetError`` naming ``what`` with the last status or transport error.
    """
    last = ""
    for attempt in range(policy.retries + 1):
        wait: float | None = None
        started = time.perf_counter()
        try:
            response = await client.request(
                method,
                url,
                content=None if method == "GET" else body,
                headers=headers,
                timeout=policy.timeout_s,
            )
        except httpx.TimeoutException:
            last = f"timed out after {policy.timeout_s:g} s"
        except httpx.TransportError as exc:
            last = f"connection failed ({type(exc).__name__}: {exc})"
        else:
            latency_ms = (time.perf_counter() - started) * 1000.0
            if response.status_code < 300:
                try:
                    payload = response.json()
                except ValueError as exc:
                    raise TargetError(
                        f"{what}: answer is not JSON (HTTP {response.status_code}, "
                        f"{response.text[:120]!r})"
                    ) from exc
                return HttpResult(payload, latency_ms, attempt + 1)
            last = f"HTTP {response.status_code}: {response.text[:200]}"
            if response.status_code not in RETRY_STATUS:
                raise TargetError(f"{what}: {last}")
            wait = retry_after_seconds(response.headers.get("retry-after"))
        if attempt < policy.retries:
            await asyncio.sleep(
                backoff_delay(
                    attempt, policy.backoff_s, 30.0, wait, retry_after_cap=MAX_RETRY_AFTER_S
                )
            )
    raise TargetError(f"{what}: {last} (after {policy.retries + 1} attempts)")
