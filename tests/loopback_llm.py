"""A loopback LLM server for tests: speaks the OpenAI and Anthropic wire formats.

Binds 127.0.0.1 on a free port, answers in a background thread, and never touches the
network. Replies are scripted (a queue) or computed by a responder; faults are scripted
the same way (429 with Retry-After, 500, a slow answer, malformed JSON, prose).

Usage::

    with LoopbackLLM() as llm:
        llm.script(Reply.rate_limited(retry_after=0.1), Reply.json({"verdict": "SUPPORTED"}))
        judge = OpenAICompatJudge(model="gpt-4o-mini", base_url=llm.url, ...)
        ...
        assert llm.count == 2

or with the pytest fixture ``loopback_llm`` (import it into a test module).

Endpoints:
- ``POST /v1/chat/completions`` (OpenAI, Ollama, vLLM, LM Studio);
- ``POST /v1/messages`` (Anthropic);
- ``POST /v1/embeddings`` (OpenAI embeddings: deterministic hashed vectors by default);
- the OpenAI Batch API (:class:`LoopbackBatches`): ``POST /v1/files`` (multipart, purpose
  batch), ``POST /v1/batches``, ``GET /v1/batches/{id}`` and ``GET /v1/files/{id}/content``.
  Each line of a batch is answered as its chat request would be (script, then responder)
  when the batch ends; ``batches.hold`` keeps batches in progress, ``batches.end`` picks
  the final status, ``batches.answered`` cuts the answered lines short and
  ``batches.fail_line`` fails chosen lines.

The content of a reply is wrapped in the wire format of the endpoint that was called,
with a ``usage`` block (token counts scripted or estimated as words).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.loopback_batches import LoopbackBatches


@dataclass(frozen=True)
class Reply:
    """One scripted answer of the server."""

    content: str = "{}"
    """Text the model 'says' (wrapped into the provider's wire format)."""
    status: int = 200
    """HTTP status."""
    headers: dict[str, str] = field(default_factory=dict)
    """Extra response headers (for example Retry-After)."""
    delay: float | None = None
    """Seconds to wait before answering; None uses the server's default delay."""
    raw_body: bytes | None = None
    """Send these bytes verbatim instead of a wire-format body (malformed JSON)."""
    input_tokens: int | None = None
    """Prompt tokens to report; None estimates from the request."""
    output_tokens: int | None = None
    """Completion tokens to report; None estimates from the content."""
    embedding: list[list[float]] | None = None
    """Vectors for /v1/embeddings; None makes deterministic ones."""

    @staticmethod
    def json(obj: Any, **kw: Any) -> Reply:
        """The model answers with this object serialised as JSON."""
        return Reply(content=json.dumps(obj), **kw)

    @staticmethod
    def text(content: str, **kw: Any) -> Reply:
        """The model answers with free text (prose instead of JSON, for instance)."""
        return Reply(content=content, **kw)

    @staticmethod
    def rate_limited(retry_after: float | None = 0.05, status: int = 429) -> Reply:
        """HTTP 429 with a Retry-After header (seconds)."""
        headers = {} if retry_after is None else {"Retry-After": f"{retry_after:g}"}
        body = json.dumps({"error": {"message": "rate limited", "type": "rate_limit"}})
        return Reply(status=status, headers=headers, raw_body=body.encode())

    @staticmethod
    def server_error(status: int = 500) -> Reply:
        """An HTTP 5xx with an error body."""
        body = json.dumps({"error": {"message": "internal error", "type": "server_error"}})
        return Reply(status=status, raw_body=body.encode())

    @staticmethod
    def malformed() -> Reply:
        """HTTP 200 whose body is not JSON at all."""
        return Reply(raw_body=b'{"choices": [ this is not json')

    @staticmethod
    def slow(seconds: float, content: str = "{}") -> Reply:
        """Answer only after ``seconds`` (longer than a client timeout, typically)."""
        return Reply(content=content, delay=seconds)


Responder = Callable[[str, dict[str, Any]], Reply | str]
"""Computes a reply from (provider, request body) when the script is empty.
``provider`` is ``openai``, ``anthropic`` or ``embeddings``."""


@dataclass(frozen=True)
class Request:
    """A request the server received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None

    @property
    def prompt_text(self) -> str:
        """All message contents of the request joined, for assertions."""
        if not self.body:
            return ""
        parts: list[str] = []
        system = self.body.get("system")
        if isinstance(system, str):
            parts.append(system)
        for message in self.body.get("messages", []):
            content = message.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                parts.extend(str(c.get("text", "")) for c in content if isinstance(c, dict))
        return "\n".join(parts)


def _estimate_tokens(text: str) -> int:
    return max(1, len(text.split()))


def _hashed_vector(text: str, dim: int = 16) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    raw = [b - 127.5 for b in digest[:dim]]
    norm = sum(x * x for x in raw) ** 0.5 or 1.0
    return [x / norm for x in raw]


class LoopbackLLM:
    """A threaded HTTP server on 127.0.0.1 with scripted LLM replies (context manager)."""

    def __init__(self, *, delay: float = 0.0, responder: Responder | None = None) -> None:
        self.delay = delay
        """Seconds every reply waits unless the reply sets its own delay."""
        self.responder = responder
        """Used when the script is empty; None answers ``{}``."""
        self.requests: list[Request] = []
        """Every request received, in arrival order."""
        self.max_in_flight = 0
        """Most requests handled at the same time."""
        self.batches = LoopbackBatches(self._answer_line)
        """The Batch API's state and controls."""
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._in_flight = 0
        self._closing = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ control
    def script(self, *replies: Reply | str) -> None:
        """Queue replies, answered in order (a str is the model's content)."""
        with self._lock:
            for reply in replies:
                self._script.append(Reply(content=reply) if isinstance(reply, str) else reply)

    @property
    def count(self) -> int:
        """Requests received so far."""
        with self._lock:
            return len(self.requests)

    @property
    def pending(self) -> int:
        """Scripted replies not used yet."""
        with self._lock:
            return len(self._script)

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:54321`` (no trailing slash, no /v1)."""
        if self._server is None:
            raise RuntimeError("server not started")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> LoopbackLLM:
        """Bind a free port and serve in a daemon thread."""
        server = _Server(("127.0.0.1", 0), _make_handler(self))
        server.daemon_threads = True
        # Slow handlers (timeout tests) must not hold up closing the server.
        server.block_on_close = False
        self._server = server
        # A short poll interval keeps close() (and every test teardown) fast.
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving; sleeping handlers are woken and dropped."""
        self._closing.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> LoopbackLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ serving
    def _next_reply(self, provider: str, body: dict[str, Any]) -> Reply:
        with self._lock:
            if self._script:
                return self._script.popleft()
        if self.responder is not None:
            out = self.responder(provider, body)
            return Reply(content=out) if isinstance(out, str) else out
        return Reply()

    def _answer_line(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """A batch line answered as its chat request would be: (status, wire body)."""
        reply = self._next_reply("openai", body)
        prompt = Request("/v1/chat/completions", {}, body).prompt_text
        return reply.status, _wire_body("openai", reply, body, prompt)

    def _enter(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            self._closing.wait(seconds)


def _wire_body(provider: str, reply: Reply, body: dict[str, Any], prompt: str) -> dict[str, Any]:
    model = str(body.get("model", "loopback"))
    in_tokens = reply.input_tokens if reply.input_tokens is not None else _estimate_tokens(prompt)
    out_tokens = (
        reply.output_tokens if reply.output_tokens is not None else _estimate_tokens(reply.content)
    )
    if provider == "anthropic":
        return {
            "id": "msg_loopback",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": reply.content}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": in_tokens, "output_tokens": out_tokens},
        }
    if provider == "embeddings":
        inputs = body.get("input", [])
        texts = [inputs] if isinstance(inputs, str) else [str(t) for t in inputs]
        vectors = reply.embedding or [_hashed_vector(t) for t in texts]
        return {
            "object": "list",
            "model": model,
            "data": [
                {"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)
            ],
            "usage": {"prompt_tokens": in_tokens, "total_tokens": in_tokens},
        }
    return {
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.content},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": in_tokens,
            "completion_tokens": out_tokens,
            "total_tokens": in_tokens + out_tokens,
        },
    }


_PATHS = {
    "/v1/chat/completions": "openai",
    "/chat/completions": "openai",
    "/v1/messages": "anthropic",
    "/v1/embeddings": "embeddings",
    "/embeddings": "embeddings",
}


class _Server(ThreadingHTTPServer):
    # listen() backlog: a client at concurrency 32-128 connects all at once, and the
    # default of 5 made some of those connections fail.
    request_queue_size = 1024


def _make_handler(owner: LoopbackLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # As every production server does: without it the body, written after the
        # headers, waits for the client's delayed ACK (~40 ms) on a kept-alive connection.
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            return  # keep test output quiet

        def do_GET(self) -> None:
            request = Request(self.path, {k.lower(): v for k, v in self.headers.items()}, None)
            owner._enter(request)
            try:
                path = self.path.split("?")[0]
                if path.startswith("/v1/batches/"):
                    status, obj = owner.batches.status(path.removeprefix("/v1/batches/"))
                    self._send(status, json.dumps(obj).encode(), {})
                    return
                parts = path.split("/")
                content = None
                if len(parts) == 5 and parts[:3] == ["", "v1", "files"] and parts[4] == "content":
                    content = owner.batches.content(parts[3])
                if content is None:
                    self._send(404, b'{"error": "not found"}', {})
                    return
                self._send(200, content, {})
            except (BrokenPipeError, ConnectionResetError):
                pass
            finally:
                owner._leave()

        def _batch_post(self, path: str, raw: bytes, body: dict[str, Any] | None) -> bool:
            """Answer the Batch API's POSTs; False for any other path."""
            if path == "/v1/files":
                status, obj = owner.batches.upload(raw, self.headers.get("Content-Type") or "")
            elif path == "/v1/batches":
                status, obj = owner.batches.create(body or {})
            else:
                return False
            self._send(status, json.dumps(obj).encode(), {})
            return True

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body: dict[str, Any] | None = json.loads(raw) if raw else None
            except (json.JSONDecodeError, UnicodeDecodeError):
                body = None
            request = Request(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            owner._enter(request)
            try:
                if self._batch_post(self.path.split("?")[0], raw, body):
                    return
                provider = _PATHS.get(self.path.split("?")[0])
                if provider is None or body is None:
                    self._send(404 if provider is None else 400, b'{"error": "bad request"}', {})
                    return
                reply = owner._next_reply(provider, body)
                owner._wait(owner.delay if reply.delay is None else reply.delay)
                if owner._closing.is_set():
                    return
                if reply.raw_body is not None:
                    payload = reply.raw_body
                else:
                    wire = _wire_body(provider, reply, body, request.prompt_text)
                    payload = json.dumps(wire).encode()
                self._send(reply.status, payload, reply.headers)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout tests)
            finally:
                owner._leave()

        def _send(self, status: int, payload: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(payload)

    return Handler


@pytest.fixture
def loopback_llm() -> Iterator[LoopbackLLM]:
    """A started LoopbackLLM, closed after the test."""
    with LoopbackLLM() as server:
        yield server
