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

The transport is aiohttp: at 32 calls in flight it spends 0.4 ms of CPU per call where
httpx spent 2.0 ms (``tests/bench/http_path.py``), and on two cores that CPU is what
decides whether 32-256 calls stay in flight. Nothing outside this module sees it: parsers
get an :class:`HttpReply`. It is imported by the first request, not with this module: a
process whose judge, embedder and target are all local never loads it (0.1 s of CPU, its
default TLS contexts included, in every ``evalhouse run`` and ``evalhouse check``).
"""

from __future__ import annotations

import asyncio
import atexit
import json
import logging
import os
import ssl
import threading
import time
from collections.abc import AsyncGenerator, Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from engine.http.routes import Route, request_headers, route_from_environment
from engine.retry import RETRY_STATUS, backoff_delay, retry_after_seconds
from engine.secrets import redact, register_headers

if TYPE_CHECKING:
    import aiohttp

log = logging.getLogger("engine.http")

T = TypeVar("T")

SNIPPET_CHARS = 300
"""How much of an error body an error message quotes."""
DEFAULT_CONNECTIONS = 100
"""Pool size of a session that was not told how many calls may be in flight."""
KEEPALIVE_S = 30.0
"""How long an idle connection is kept open for the next call."""
MAX_ROUTES = 256
"""URLs whose proxy and credentials a session remembers."""
MAX_REPLY_BYTES = 32 * 1024 * 1024
"""Largest HTTP answer read by default (a chat answer or an embedding batch is kilobytes)."""
DEADLINE_FACTOR = 4.0
"""A request's whole-request deadline, in multiples of its per-read time limit."""


@dataclass(frozen=True)
class RetryPolicy:
    """How a provider's HTTP calls wait and retry."""

    retries: int = 2
    """Retries after the first attempt."""
    timeout_s: float = 60.0
    """Time limit of one request: to get a connection, and between two reads of the
    answer (a server that keeps sending is not cut off)."""
    backoff_s: float = 0.5
    """First backoff; doubled on every retry, with jitter, capped at ``backoff_max_s``."""
    backoff_max_s: float = 30.0
    """Longest backoff between two attempts."""
    retry_after_max_s: float = 60.0
    """Longest ``Retry-After`` honoured; a server asking for more is waited on this long."""
    deadline_s: float | None = None
    """Time limit of one request as a whole, connection to last byte: a server that sends
    one byte a second never trips ``timeout_s``, which restarts on every read. None:
    ``DEADLINE_FACTOR`` times ``timeout_s``."""
    max_reply_bytes: int = MAX_REPLY_BYTES
    """Largest answer read; a longer body is cut off and the request fails (not retried:
    the same server would send the same body)."""

    @property
    def deadline(self) -> float:
        """The whole-request time limit in seconds."""
        return self.deadline_s if self.deadline_s is not None else DEADLINE_FACTOR * self.timeout_s


@dataclass(frozen=True)
class HttpReply:
    """A whole HTTP answer, read: what every ``parse`` function and error message sees."""

    status_code: int
    headers: Mapping[str, str]
    """Case-insensitive, as the server sent them."""
    content: bytes
    charset: str | None = None
    """From ``Content-Type``; None reads the body as UTF-8."""

    @property
    def text(self) -> str:
        """The body as text (undecodable bytes replaced, never an exception)."""
        try:
            return self.content.decode(self.charset or "utf-8", errors="replace")
        except LookupError:  # a charset Python does not know
            return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        """The body parsed as JSON; ``ValueError`` when it is not."""
        return json.loads(self.content)


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


def body_snippet(response: HttpReply) -> str:
    """The start of a body as one line, secrets masked before it is cut (so a cut can
    never leave half a token behind)."""
    text = response.text[: SNIPPET_CHARS * 16]
    text = " ".join(redact(text).split())
    return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 3] + "..."


def parse_json(response: HttpReply) -> Any:
    """The JSON value of a body; :class:`UnreadableReply` naming what came instead."""
    try:
        return response.json()
    except ValueError as exc:
        raise UnreadableReply(
            f"answer is not JSON (HTTP {response.status_code}, {body_snippet(response)[:120]!r})"
        ) from exc


def _status_reason(response: HttpReply) -> str:
    if 300 <= response.status_code < 400:
        where = response.headers.get("location", "")
        return f"HTTP {response.status_code}: redirected to {where!r}; use the final URL"
    snippet = body_snippet(response)
    return f"HTTP {response.status_code}" + (f": {snippet}" if snippet else "")


class _ReplyTooLarge(Exception):
    """The body went over the policy's byte cap."""


async def _read_capped(response: aiohttp.ClientResponse, cap: int) -> bytes:
    """The whole body, or ``_ReplyTooLarge`` as soon as it passes ``cap`` bytes (an
    endless body is never held whole)."""
    declared = response.content_length
    if declared is not None and declared > cap:
        raise _ReplyTooLarge
    parts: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_chunked(1 << 16):
        size += len(chunk)
        if size > cap:
            raise _ReplyTooLarge
        parts.append(chunk)
    return b"".join(parts)


async def _attempt(
    session: HttpSession,
    method: str,
    url: str,
    content: bytes | None,
    headers: Mapping[str, str] | None,
    policy: RetryPolicy,
    limit: asyncio.Semaphore | None,
) -> tuple[HttpReply | None, str, float, bool]:
    """One request: (answer or None, failure reason, latency in ms, worth retrying)."""
    import aiohttp

    timeout = aiohttp.ClientTimeout(
        total=None, connect=policy.timeout_s, sock_read=policy.timeout_s
    )
    client = await session.client()
    route = session.route(url)
    started = time.perf_counter()
    whole: asyncio.Timeout | None = None
    try:
        if limit is not None:
            await limit.acquire()
            started = time.perf_counter()
        try:
            async with asyncio.timeout(policy.deadline) as whole:
                async with client.request(
                    method,
                    url,
                    data=content,
                    headers=request_headers(route, headers),
                    proxy=route.proxy,
                    proxy_auth=route.proxy_auth,
                    timeout=timeout,
                    allow_redirects=False,
                ) as response:
                    body = await _read_capped(response, policy.max_reply_bytes)
                    reply = HttpReply(response.status, response.headers, body, response.charset)
        finally:
            if limit is not None:
                limit.release()
    except TimeoutError:
        if whole is not None and whole.expired():
            return None, f"no whole answer within {policy.deadline:g} s", 0.0, True
        return None, f"timed out after {policy.timeout_s:g} s", 0.0, True
    except _ReplyTooLarge:
        return None, f"answer over {policy.max_reply_bytes:,} bytes; not read", 0.0, False
    except (aiohttp.ClientError, OSError) as exc:
        return None, f"connection failed ({type(exc).__name__}: {exc})", 0.0, True
    return reply, "", (time.perf_counter() - started) * 1000.0, True


async def send_with_retries(
    session: HttpSession,
    url: str,
    *,
    policy: RetryPolicy,
    parse: Callable[[HttpReply], T],
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
    backoff. Redirects are not followed (a POST must not turn into a GET elsewhere): they
    fail naming where they point. ``limit`` bounds requests in flight (held per attempt,
    never while waiting). ``label`` names the caller in log lines. Raises
    :class:`SendError`.
    """
    register_headers(headers)  # a credential sent is masked wherever an answer echoes it
    attempts = policy.retries + 1
    for attempt in range(attempts):
        response, reason, latency_ms, retryable = await _attempt(
            session, method, url, content, headers, policy, limit
        )
        if not retryable:
            raise SendError(reason, attempts=attempt + 1)
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


_TLS: list[ssl.SSLContext] = []
_TLS_LOCK = threading.Lock()


def shared_tls_context() -> ssl.SSLContext:
    """The TLS context of every connection, made once per process: certifi's CAs, or
    ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` when set (as curl and httpx read them). Loading a
    CA bundle takes 0.1-0.4 s; once per client it was seconds of event loop at
    concurrency 128."""
    with _TLS_LOCK:
        if not _TLS:
            cafile, capath = os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")
            if not (cafile or capath):
                import certifi

                cafile = certifi.where()
            _TLS.append(ssl.create_default_context(cafile=cafile, capath=capath))
        return _TLS[0]


async def _closed_with_the_loop(client: aiohttp.ClientSession) -> AsyncGenerator[None, None]:
    # An async generator suspended here is closed by asyncio.run() before its loop ends
    # (shutdown_asyncgens), so a session nobody closed still releases its connections on
    # its own loop instead of warning "Unclosed client session" at garbage collection.
    try:
        yield
    finally:
        await client.close()


class HttpSession:
    """The HTTP connections of one provider, per event loop, sized to the calls in flight.

    One aiohttp client per event loop with a pool of ``max_connections``, every one kept
    alive between calls (httpx's default kept 20, so every call beyond them paid a new TCP
    handshake). Proxies come from the environment (``HTTP_PROXY``, ``HTTPS_PROXY``,
    ``NO_PROXY``) and credentials from ``~/.netrc``, as with curl, read once per session and
    URL. A client belongs to the loop it was made on, so a new loop (a new
    ``asyncio.run``) gets a new one, and the old loop closed its own on the way out.
    """

    def __init__(self, *, max_connections: int | None = None) -> None:
        self.max_connections = max(1, max_connections or DEFAULT_CONNECTIONS)
        self._client: aiohttp.ClientSession | None = None
        self._closer: AsyncGenerator[None, None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._routes: dict[str, Route] = {}

    def route(self, url: str) -> Route:
        """How requests to ``url`` go out (proxy, credentials), read from the environment on
        the first request to it (reading ``~/.netrc`` on the loop, once per session and
        URL, costs less than the thread hop aiohttp made for it on every request)."""
        route = self._routes.get(url)
        if route is None:
            if len(self._routes) >= MAX_ROUTES:  # a target with a new URL per call
                self._routes.clear()
            route = self._routes[url] = route_from_environment(url)
        return route

    async def client(self) -> aiohttp.ClientSession:
        """The client of the running loop, made on first use."""
        import aiohttp

        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop or self._client.closed:
            connector = aiohttp.TCPConnector(
                limit=self.max_connections,
                limit_per_host=0,
                ssl=shared_tls_context(),
                keepalive_timeout=KEEPALIVE_S,
            )
            # trust_env stays off: route() reads the environment once instead.
            client = aiohttp.ClientSession(
                connector=connector, trust_env=False, timeout=aiohttp.ClientTimeout(total=None)
            )
            closer = _closed_with_the_loop(client)
            await anext(closer)
            self._client, self._closer, self._loop = client, closer, loop
        return self._client

    async def aclose(self) -> None:
        """Close the connections this session opened on the running loop (a client of
        another loop is that loop's to close: it does so when it ends)."""
        closer, loop = self._closer, self._loop
        self._client, self._closer, self._loop = None, None, None
        if closer is not None and loop is asyncio.get_running_loop():
            await closer.aclose()


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
                # An owner that never calls close() still gets its connections closed
                # before the interpreter goes, not "Unclosed client session" on stderr.
                atexit.register(self.close)
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
        atexit.unregister(self.close)
        if last is not None:
            asyncio.run_coroutine_threadsafe(last(), loop).result()
        # What asyncio.run() does on its way out: HTTP sessions made on this loop close.
        asyncio.run_coroutine_threadsafe(loop.shutdown_asyncgens(), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()


__all__ = [
    "HttpReply",
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
