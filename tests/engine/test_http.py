"""The one send-with-retries (engine.http) against a loopback HTTP/1.1 server: Retry-After,
5xx then success, timeouts, refused connections, unreadable bodies, the wording of the
attempt count, secrets masked in errors, and one kept-alive pool per session."""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from engine.http import (
    HttpReply,
    HttpSession,
    LoopThread,
    RetryPolicy,
    SendError,
    UnreadableReply,
    parse_json,
    send_with_retries,
)
from engine.secrets import register

FAST = RetryPolicy(retries=2, timeout_s=2.0, backoff_s=0.01)


class Server:
    """Scripted (status, headers, body, delay) replies; records each request's client port."""

    def __init__(self) -> None:
        self.script: deque[tuple[int, dict[str, str], bytes, float]] = deque()
        self.ports: list[int] = []
        self.paths: list[str] = []
        """Request targets as sent: absolute (``http://host/x``) when through a proxy."""
        self.authorizations: list[str | None] = []
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real providers

            def log_message(self, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with owner.lock:
                    owner.ports.append(self.client_address[1])
                    owner.paths.append(self.path)
                    owner.authorizations.append(self.headers.get("Authorization"))
                    owner.in_flight += 1
                    owner.max_in_flight = max(owner.max_in_flight, owner.in_flight)
                    step = owner.script.popleft() if owner.script else None
                status, headers, body, delay = step or (200, {}, b'{"ok": true}', 0.0)
                time.sleep(delay)
                with owner.lock:
                    owner.in_flight -= 1
                try:
                    self.send_response(status)
                    self.send_header("Content-Length", str(len(body)))
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/x"

    def reply(
        self, status: int, body: Any = None, headers: dict[str, str] | None = None, delay: float = 0
    ) -> None:
        raw = body if isinstance(body, bytes) else json.dumps(body or {"ok": True}).encode()
        self.script.append((status, headers or {}, raw, delay))

    @property
    def count(self) -> int:
        return len(self.ports)


@pytest.fixture
def server() -> Iterator[Server]:
    s = Server()
    yield s
    s.httpd.shutdown()
    s.httpd.server_close()


def send(url: str, policy: RetryPolicy = FAST, **kw: Any) -> Any:
    async def go() -> Any:
        session = HttpSession(max_connections=4)
        try:
            return await send_with_retries(
                session, url, policy=policy, parse=kw.pop("parse", parse_json), content=b"{}", **kw
            )
        finally:
            await session.aclose()

    return asyncio.run(go())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_429_waits_as_long_as_retry_after_says(server: Server) -> None:
    server.reply(429, {"error": "slow down"}, {"Retry-After": "0.4"})
    started = time.perf_counter()
    sent = send(server.url)
    assert time.perf_counter() - started >= 0.4
    assert (sent.value, sent.status, sent.attempts, server.count) == ({"ok": True}, 200, 2, 2)
    assert sent.latency_ms > 0


def test_500_then_200(server: Server) -> None:
    server.reply(500, {"error": "boom"})
    sent = send(server.url)
    assert sent.attempts == 2 and sent.value == {"ok": True}


def test_the_latency_is_that_of_the_successful_attempt(server: Server) -> None:
    server.reply(503, {"error": "busy"}, delay=0.3)
    server.reply(200, {"ok": True}, delay=0.05)
    sent = send(server.url)
    assert 40 <= sent.latency_ms < 280


def test_persistent_5xx_reads_well(server: Server) -> None:
    for _ in range(3):
        server.reply(503, {"error": "busy"})
    with pytest.raises(SendError) as caught:
        send(server.url)
    assert str(caught.value) == 'HTTP 503: {"error": "busy"} (after 3 attempts)'
    assert (caught.value.attempts, caught.value.status) == (3, 503)
    assert server.count == 3


def test_a_client_error_is_not_retried_and_names_no_attempts(server: Server) -> None:
    server.reply(404, {"error": "no such route"})
    with pytest.raises(SendError) as caught:
        send(server.url)
    assert str(caught.value) == 'HTTP 404: {"error": "no such route"}'
    assert server.count == 1


def test_a_client_error_after_retries_says_how_many_attempts(server: Server) -> None:
    server.reply(502, b"")
    server.reply(401, {"error": "key revoked"})
    with pytest.raises(
        SendError, match=r'^HTTP 401: \{"error": "key revoked"\} \(after 2 attempts\)$'
    ):
        send(server.url)


def test_no_retries_configured_gives_one_attempt(server: Server) -> None:
    server.reply(503, b"")
    with pytest.raises(SendError) as caught:
        send(server.url, RetryPolicy(retries=0, timeout_s=2.0, backoff_s=0.01))
    assert str(caught.value) == "HTTP 503" and server.count == 1


def test_timeout_is_retried_then_reported(server: Server) -> None:
    server.reply(200, {"late": True}, delay=1.0)
    server.reply(200, {"late": True}, delay=1.0)
    policy = RetryPolicy(retries=1, timeout_s=0.2, backoff_s=0.01)
    started = time.perf_counter()
    with pytest.raises(SendError) as caught:
        send(server.url, policy)
    assert str(caught.value) == "timed out after 0.2 s (after 2 attempts)"
    assert caught.value.status is None
    # Waiting for the late replies would take 2 x 1.0 s; the two timeouts take 0.4 s, and the
    # bound leaves a busy machine room to start the client (it failed at 0.9 under load).
    assert time.perf_counter() - started < 1.8


def test_timeout_then_success(server: Server) -> None:
    server.reply(200, {"late": True}, delay=1.0)
    policy = RetryPolicy(retries=1, timeout_s=0.2, backoff_s=0.01)
    assert send(server.url, policy).value == {"ok": True}


def test_connection_refused() -> None:
    with pytest.raises(SendError) as caught:
        send(f"http://127.0.0.1:{free_port()}/x", RetryPolicy(1, 1.0, 0.01))
    text = str(caught.value)
    assert text.startswith("connection failed (ClientConnectorError") and text.endswith(
        "(after 2 attempts)"
    )


def test_non_json_body_is_refused_at_once_or_retried_when_asked(server: Server) -> None:
    server.reply(200, b"<html>gateway</html>")
    with pytest.raises(SendError) as caught:
        send(server.url)
    assert str(caught.value) == "answer is not JSON (HTTP 200, '<html>gateway</html>')"
    assert server.count == 1
    server.reply(200, b"<html>gateway</html>")
    assert send(server.url, retry_unreadable=True).attempts == 2
    for _ in range(3):
        server.reply(200, b'{"data": 1}')

    def strict(response: HttpReply) -> Any:
        return response.json()["choices"]

    with pytest.raises(SendError, match=r"^unreadable response body \(KeyError: 'choices'\)"):
        send(server.url, parse=strict, retry_unreadable=True)


def test_unreadable_reply_message_is_kept(server: Server) -> None:
    def refuse(response: HttpReply) -> Any:
        raise UnreadableReply("expected 2 embeddings, got 1")

    with pytest.raises(SendError, match=r"^expected 2 embeddings, got 1$"):
        send(server.url, parse=refuse)


def test_redirects_are_not_followed_and_say_where(server: Server) -> None:
    server.reply(301, b"", {"Location": "https://elsewhere.example/x"})
    with pytest.raises(SendError, match=r"redirected to 'https://elsewhere\.example/x'"):
        send(server.url)


def test_a_registered_secret_in_an_error_body_is_masked_even_at_the_cut(server: Server) -> None:
    secret = "sk-http-test-5e2a1c9d7b3f"
    register(secret)
    # The secret straddles the 300-character cut of the snippet: no prefix of it may stay.
    server.reply(400, ("x" * 290 + f" {secret} ").encode())
    with pytest.raises(SendError) as caught:
        send(server.url)
    assert "sk-http" not in str(caught.value)
    server.reply(400, {"echo": f"Bearer {secret}"})
    with pytest.raises(SendError, match=r"Bearer \*\*\*"):
        send(server.url)


def test_retries_are_logged_without_secrets(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "tok-logged-8c1e4f0a"
    register(secret)
    server.reply(503, {"echo": secret})
    send(server.url, label=f"target with {secret}")
    assert "retry 1/2" in caplog.text and secret not in caplog.text


def test_limit_bounds_requests_in_flight(server: Server) -> None:
    for _ in range(6):
        server.reply(200, {"ok": True}, delay=0.1)

    async def go() -> None:
        limit = asyncio.Semaphore(2)
        session = HttpSession(max_connections=6)
        await asyncio.gather(
            *(
                send_with_retries(session, server.url, policy=FAST, parse=parse_json, limit=limit)
                for _ in range(6)
            )
        )
        await session.aclose()

    asyncio.run(go())
    assert server.max_in_flight == 2


def test_a_session_keeps_as_many_connections_alive_as_calls_in_flight(server: Server) -> None:
    """32 calls at a time, three rounds: 32 connections in all, none opened twice (httpx's
    default pool kept only 20 alive between rounds: 32-36 connections in the same test)."""
    session = HttpSession(max_connections=32)

    async def rounds() -> None:
        for _ in range(3):
            for _ in range(32):
                server.reply(200, {"ok": True}, delay=0.05)
            await asyncio.gather(
                *(
                    send_with_retries(session, server.url, policy=FAST, parse=parse_json)
                    for _ in range(32)
                )
            )
        await session.aclose()

    asyncio.run(rounds())
    assert server.count == 96
    assert len(set(server.ports)) == 32


def test_a_session_gives_each_event_loop_its_own_client_and_the_loop_closes_it() -> None:
    session = HttpSession(max_connections=4)

    async def client_of_this_loop() -> tuple[Any, Any]:
        return await session.client(), await session.client()

    first, again = asyncio.run(client_of_this_loop())
    second, _ = asyncio.run(client_of_this_loop())
    assert first is again and first is not second
    # Nobody called aclose(): asyncio.run() closed each client before its loop ended, so
    # nothing is left to warn "Unclosed client session" at garbage collection.
    assert first.closed and second.closed


def test_a_session_closed_by_its_owner_is_made_again_on_next_use(server: Server) -> None:
    session = HttpSession(max_connections=2)

    async def twice() -> list[Any]:
        one = await send_with_retries(session, server.url, policy=FAST, parse=parse_json)
        await session.aclose()
        two = await send_with_retries(session, server.url, policy=FAST, parse=parse_json)
        await session.aclose()
        return [one.value, two.value]

    assert asyncio.run(twice()) == [{"ok": True}, {"ok": True}]


def test_loop_thread_runs_coroutines_for_sync_callers(server: Server) -> None:
    session = HttpSession(max_connections=2)
    loop = LoopThread("test")

    async def one() -> Any:
        return await send_with_retries(session, server.url, policy=FAST, parse=parse_json)

    values = [loop.run(one()) for _ in range(3)]
    loop.close(session.aclose)
    assert [v.value for v in values] == [{"ok": True}] * 3
    assert len(set(server.ports)) == 1  # one kept-alive connection served all three


def test_every_session_shares_one_tls_context() -> None:
    # Loading the CA bundle took 0.1-0.4 s per client: a session at concurrency 128 (32
    # clients) spent seconds of its event loop on it before the first call.
    from engine.http import shared_tls_context

    async def context(connections: int) -> int:
        session = HttpSession(max_connections=connections)
        found = id((await session.client()).connector._ssl)  # type: ignore[union-attr]
        await session.aclose()
        return found

    assert {asyncio.run(context(128)), asyncio.run(context(32))} == {id(shared_tls_context())}


# ------------------------------------------------------------------ proxies and .netrc


def test_http_proxy_from_the_environment_carries_the_request(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server plays the proxy: it receives the absolute URL of a host nobody resolves.
    monkeypatch.setenv("HTTP_PROXY", server.url.rsplit("/", 1)[0])
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    out = send("http://judge.invalid/v1/chat")
    assert out.value == {"ok": True}
    assert server.paths == ["http://judge.invalid/v1/chat"]


def test_no_proxy_sends_straight_to_the_host(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{free_port()}")  # nobody listens
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    assert send(server.url).value == {"ok": True}
    assert server.paths == ["/x"]


def test_netrc_credentials_are_sent_only_when_the_request_has_none(
    server: Server, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login ann password netrc-secret-42\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    send(server.url)
    send(server.url, headers={"Authorization": "Bearer sk-own"})
    expected = "Basic " + base64.b64encode(b"ann:netrc-secret-42").decode()
    assert server.authorizations == [expected, "Bearer sk-own"]


def test_the_environment_is_read_once_per_session_and_url(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HTTP_PROXY", raising=False)

    async def go() -> None:
        session = HttpSession(max_connections=4)
        try:
            for _ in range(3):
                await send_with_retries(
                    session, server.url, policy=FAST, parse=parse_json, content=b"{}"
                )
                # A proxy set mid-session is not seen: the route was read on first use.
                monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{free_port()}")
        finally:
            await session.aclose()

    asyncio.run(go())
    assert server.paths == ["/x"] * 3
