"""One HTTP send-with-retries for every provider: judges, embedders and targets.

:func:`send_with_retries` sends one request with a time limit, retries what is worth
retrying (the statuses of :data:`engine.retry.RETRY_STATUS`, timeouts, connection errors
and, when the caller says so, unreadable bodies) with exponential backoff and jitter,
honours ``Retry-After``, and returns the parsed answer with its latency and the number of
attempts. When it gives up it raises one :class:`SendError` whose text a person can act
on (``HTTP 503: busy (after 3 attempts)``) and in which every registered secret is masked
(:mod:`engine.secrets`). Callers wrap it in their own error type (``TargetError``,
``JudgeError``, ``EmbedderError``); nobody else retries HTTP calls.

:class:`HttpSession` holds the connections of one provider per event loop, sized to the
calls that may be in flight and all kept alive, so no request pays for a new client or a
new TCP handshake once the pool is warm.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import threading
import time
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import httpx

from engine.retry import RETRY_STATUS, backoff_delay, retry_after_seconds
from engine.secrets import redact

log = logging.getLogger("engine.http")

T = TypeVar("T")

SNIPPET_CHARS = 300
"""How much of an error body an error message quotes."""
DEFAULT_CONNECTIONS = 100
"""Pool size of a session that was not told how many calls may be in flight."""


@dataclass(frozen=True)
class RetryPolicy:
    """How a provider's HTTP calls wait and retry."""

    retries: int = 2
    """Retries after the first attempt."""
    timeout_s: float = 60.0
    """Time limit of one request."""
    backoff_s: float = 0.5
    """First backoff; doubled on every retry, with jitter, capped at ``backoff_max_s``."""
    backoff_max_s: float = 30.0
    """Longest backoff between two attempts."""
    retry_after_max_s: float = 60.0
    """Longest ``Retry-After`` honoured; a server asking for more is waited on this long."""


class UnreadableReply(Exception):
    """Raised by a ``parse`` function: the body is not what the provider should answer."""


class SendError(Exception):
    """A request failed for good: its reason, the HTTP status (if any) and the attempts made.

    ``str()`` is one line, secrets masked: ``HTTP 503: busy (after 3 attempts)``,
    ``timed out after 2 s (after 3 attempts)``, ``HTTP 401: bad key``.
    """

    def __init__(self, reason: str, *, attempts: int, status: int | None = None) -> None:
        self.reason = redact(reason)
        self.attempts = attempts
        self.status = status
        suffix = f" (after {attempts} attempts)" if attempts > 1 else ""
        super().__init__(f"{self.reason}{suffix}")


@dataclass(frozen=True)
class Sent(Generic[T]):
    """A successful answer: the parsed value, the status and how it was obtained."""

    value: T
    """What ``parse`` returned."""
    status: int
    """HTTP status of the successful attempt."""
    latency_ms: float
    """Wall time of the successful attempt (request sent to body read)."""
    attempts: int
    """Requests made, the successful one included."""


def body_snippet(response: httpx.Response) -> str:
    """The start of a body as one line, secrets masked before it is cut (so a cut can
    never leave half a token behind)."""
    try:
        text = response.text[: SNIPPET_CHARS * 16]
    except (UnicodeDecodeError, LookupError):
        text = repr(response.content[: SNIPPET_CHARS * 4])
    text = " ".join(redact(text).split())
    return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 3] + "..."


def parse_json(response: httpx.Response) -> Any:
    """The JSON value of a body; :class:`UnreadableReply` naming what came instead."""
    try:
        return response.json()
    except ValueError as exc:
        raise UnreadableReply(
            f"answer is not JSON (HTTP {response.status_code}, {body_snippet(response)[:120]!r})"
        ) from exc


def _status_reason(response: httpx.Response) -> str:
    if 300 <= response.status_code < 400:
        where = response.headers.get("location", "")
        return f"HTTP {response.status_code}: redirected to {where!r}; use the final URL"
    snippet = body_snippet(response)
    return f"HTTP {response.status_code}" + (f": {snippet}" if snippet else "")


async def _attempt(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    content: bytes | None,
    headers: Mapping[str, str] | None,
    policy: RetryPolicy,
    limit: asyncio.Semaphore | None,
) -> tuple[httpx.Response | None, str, float]:
    """One request: (response or None, failure reason, latency in ms)."""
    started = time.perf_counter()
    try:
        if limit is None:
            response = await client.request(
                method, url, content=content, headers=headers, timeout=policy.timeout_s
            )
        else:
            async with limit:
                started = time.perf_counter()
                response = await client.request(
                    method, url, content=content, headers=headers, timeout=policy.timeout_s
                )
    except httpx.TimeoutException:
        return None, f"timed out after {policy.timeout_s:g} s", 0.0
    except httpx.TransportError as exc:
        return None, f"connection failed ({type(exc).__name__}: {exc})", 0.0
    return response, "", (time.perf_counter() - started) * 1000.0


async def send_with_retries(
    client: httpx.AsyncClient,
    url: str,
    *,
    policy: RetryPolicy,
    parse: Callable[[httpx.Response], T],
    method: str = "POST",
    content: bytes | None = None,
    headers: Mapping[str, str] | None = None,
    label: str = "http",
    retry_unreadable: bool = False,
    limit: asyncio.Semaphore | None = None,
) -> Sent[T]:
    """Send ``content`` to ``url`` and ``parse`` the answer, retrying transient failures.

    Retried: :data:`RETRY_STATUS` answers, timeouts, transport errors and, when
    ``retry_unreadable``, bodies ``parse`` cannot read (``UnreadableReply``, ``ValueError``,
    ``KeyError``, ``TypeError``, ``IndexError``). A ``Retry-After`` header replaces the
    backoff. ``limit`` bounds requests in flight (held per attempt, never while waiting).
    ``label`` names the caller in log lines. Raises :class:`SendError`.
    """
    attempts = policy.retries + 1
    for attempt in range(attempts):
        response, reason, latency_ms = await _attempt(
            client, method, url, content, headers, policy, limit
        )
        wait: float | None = None
        status: int | None = None
        if response is not None:
            status = response.status_code
            if status < 300:
                try:
                    value = parse(response)
                except (UnreadableReply, ValueError, KeyError, TypeError, IndexError) as exc:
                    reason = (
                        str(exc)
                        if isinstance(exc, UnreadableReply)
                        else f"unreadable response body ({type(exc).__name__}: {exc})"
                    )
                    if not retry_unreadable:
                        raise SendError(reason, attempts=attempt + 1, status=status) from None
                else:
                    return Sent(value, status, latency_ms, attempt + 1)
            else:
                reason = _status_reason(response)
                if status not in RETRY_STATUS:
                    raise SendError(reason, attempts=attempt + 1, status=status)
                wait = retry_after_seconds(response.headers.get("retry-after"))
        if attempt + 1 >= attempts:
            raise SendError(reason, attempts=attempts, status=status)
        delay = backoff_delay(
            attempt,
            policy.backoff_s,
            policy.backoff_max_s,
            wait,
            retry_after_cap=policy.retry_after_max_s,
        )
        log.warning(
            "%s: %s, retry %d/%d in %.2fs",
            redact(label),
            redact(reason),
            attempt + 1,
            policy.retries,
            delay,
        )
        await asyncio.sleep(delay)
    raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover


SHARD_CONNECTIONS = 4
"""Connections per pooled client of a session (see :class:`HttpSession`)."""

_TLS: list[ssl.SSLContext] = []
_TLS_LOCK = threading.Lock()


def shared_tls_context() -> ssl.SSLContext:
    """httpx's default TLS context (certifi's CAs, ``SSL_CERT_FILE``/``SSL_CERT_DIR``
    honoured), made once per process and shared by every client: loading the CA bundle
    took 0.1-0.4 s per client, and a session at concurrency 128 makes 32 clients, all on
    the event loop."""
    with _TLS_LOCK:
        if not _TLS:
            _TLS.append(httpx.create_ssl_context())
        return _TLS[0]


class HttpSession:
    """The HTTP connections of one provider, per event loop, sized to the calls in flight.

    Every connection is kept alive (httpx's default keeps 20, so every call beyond them
    paid a new TCP handshake). The pool is split over a few ``httpx.AsyncClient`` of
    :data:`SHARD_CONNECTIONS` connections each, taken in turn: httpcore's pool
    bookkeeping costs time quadratic in the connections of one pool on every request
    (``_assign_requests_to_connections`` counts all connections once per idle one), which
    at 32-128 connections was most of the event loop's CPU (``tests/bench/http_path.py``).
    A client belongs to the loop it was made on, so a new loop (a new ``asyncio.run``) gets
    new clients. A client passed in is used as is and never closed.
    """

    def __init__(
        self,
        *,
        max_connections: int | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self.max_connections = max(1, max_connections or DEFAULT_CONNECTIONS)
        self._transport = transport
        self._given = client
        self._clients: list[httpx.AsyncClient] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._turn = 0

    def _make_clients(self) -> list[httpx.AsyncClient]:
        # A transport passed in is one object: it cannot be shared by several clients.
        shards = 1 if self._transport is not None else -(-self.max_connections // SHARD_CONNECTIONS)
        per = -(-self.max_connections // shards)
        # Room for twice a fair share: taking clients in turn never queues a call in one
        # pool while another has a free connection.
        size = per if shards == 1 else min(self.max_connections, 2 * per)
        limits = httpx.Limits(max_connections=size, max_keepalive_connections=size)
        if self._transport is not None:
            return [httpx.AsyncClient(transport=self._transport, limits=limits)]
        tls = shared_tls_context()
        return [httpx.AsyncClient(limits=limits, verify=tls) for _ in range(shards)]

    def client(self) -> httpx.AsyncClient:
        """A client of the running loop (made on first use), the pooled ones in turn."""
        if self._given is not None:
            return self._given
        loop = asyncio.get_running_loop()
        if not self._clients or self._loop is not loop:
            self._clients = self._make_clients()
            self._loop = loop
        self._turn = (self._turn + 1) % len(self._clients)
        return self._clients[self._turn]

    async def aclose(self) -> None:
        """Close the connections this session opened."""
        clients, self._clients, self._loop = self._clients, [], None
        for client in clients:
            await client.aclose()


class LoopThread:
    """An event loop on a daemon thread, so synchronous callers (the embedders, called
    from the scoring worker threads) send through the same async path and keep one
    long-lived client instead of a new one per call."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name=self._name, daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the thread's loop and wait for its result (from any other thread)."""
        return asyncio.run_coroutine_threadsafe(coro, self._running_loop()).result()

    def close(self, last: Callable[[], Coroutine[Any, Any, None]] | None = None) -> None:
        """Run ``last`` (closing clients, say) on the loop, then stop the thread."""
        with self._lock:
            loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
        if loop is None or thread is None:
            return
        if last is not None:
            asyncio.run_coroutine_threadsafe(last(), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()


__all__ = [
    "SHARD_CONNECTIONS",
    "HttpSession",
    "LoopThread",
    "RetryPolicy",
    "SendError",
    "Sent",
    "UnreadableReply",
    "body_snippet",
    "parse_json",
    "send_with_retries",
    "shared_tls_context",
]
