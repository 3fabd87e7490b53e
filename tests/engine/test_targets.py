"""Targets against loopback servers: the recorded answer, OpenAI chat, an HTTP endpoint."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from engine.candidates import read_candidate_file
from engine.models import TargetOptions, TestCase
from engine.targets import (
    RetryPolicy,
    TargetConfigError,
    TargetError,
    build_target,
)
from engine.targets.base import retry_after_seconds
from engine.targets.candidate import build_candidate_target
from engine.targets.http_endpoint import HttpEndpointTarget, JsonPath
from engine.targets.openai_chat import OpenAIChatTarget
from engine.targets.recorded import RecordedTarget
from tests.loopback_llm import LoopbackLLM, Reply

FAST = RetryPolicy(retries=2, timeout_s=2.0, backoff_s=0.01)
CASE = TestCase(
    id="acme-q01",
    domain="acme.com",
    query='What does "Acme Pro" cost?',
    response="Acme Pro costs $49.",
    context=("Acme Pro is $49 per month.",),
    metadata={"lang": "en", "user": {"tier": "gold"}},
)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def ask(target: Any, case: TestCase = CASE) -> Any:
    """One answer, with the target's client closed on the same event loop."""

    async def go() -> Any:
        try:
            return await target.respond(case)
        finally:
            await target.aclose()

    return asyncio.run(go())


# ------------------------------------------------------------------------- a loopback endpoint

Handler = Callable[[dict[str, Any]], tuple[int, dict[str, str], bytes]]


class Endpoint:
    """A JSON endpoint on 127.0.0.1 with scripted replies; records every request body."""

    def __init__(self) -> None:
        self.bodies: list[Any] = []
        self.headers: list[dict[str, str]] = []
        self.script: deque[tuple[int, dict[str, str], bytes, float]] = deque()
        self.default: Handler = lambda body: (200, {}, json.dumps({"answer": "ok"}).encode())
        owner = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = json.loads(raw)
                owner.bodies.append(body)
                owner.headers.append({k.lower(): v for k, v in self.headers.items()})
                if owner.script:
                    status, headers, payload, delay = owner.script.popleft()
                else:
                    status, headers, payload = owner.default(body)
                    delay = 0.0
                time.sleep(delay)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.server.daemon_threads = True
        self.server.block_on_close = False
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        host, port = self.server.server_address[:2]
        self.url = f"http://{host!s}:{port}/query"

    def reply(self, status: int, obj: Any, headers: dict[str, str] | None = None, delay: float = 0):
        payload = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
        self.script.append((status, headers or {}, payload, delay))

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    server = Endpoint()
    yield server
    server.close()


@pytest.fixture
def llm() -> Iterator[LoopbackLLM]:
    with LoopbackLLM() as server:
        yield server


# ------------------------------------------------------------------------- recorded


def test_recorded_returns_the_case_response_and_context() -> None:
    got = ask(RecordedTarget())
    assert got.text == "Acme Pro costs $49."
    assert got.contexts == ("Acme Pro is $49 per month.",)
    assert got.latency_ms is None and got.cost_usd == 0.0


def test_recorded_without_response_is_a_per_sample_error() -> None:
    with pytest.raises(TargetError, match=r"case 'x' has no recorded response"):
        run(RecordedTarget().respond(TestCase(id="x", query="q")))


# ------------------------------------------------------------------------- openai chat


def _openai(llm: LoopbackLLM, **kw: Any) -> OpenAIChatTarget:
    return OpenAIChatTarget(
        "gpt-4o-mini", base_url=f"{llm.url}/v1", api_key="sk-test", policy=FAST, **kw
    )


def test_openai_sends_versioned_system_prompt_and_counts_tokens(llm: LoopbackLLM) -> None:
    llm.script(Reply.text("Acme Pro costs $49 a month.", input_tokens=1000, output_tokens=500))
    target = _openai(llm)
    got = ask(target)
    assert got.text == "Acme Pro costs $49 a month."
    assert (got.input_tokens, got.output_tokens) == (1000, 500)
    assert got.cost_usd == pytest.approx((1000 * 0.15 + 500 * 0.60) / 1e6)
    assert got.latency_ms is not None and got.latency_ms > 0
    assert target.name == "openai:gpt-4o-mini@system.v1"
    request = llm.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.body is not None
    messages = request.body["messages"]
    assert messages[0]["role"] == "system"
    assert "never invent prices" in messages[0]["content"]
    assert messages[1] == {"role": "user", "content": CASE.query}


def test_openai_retries_429_honouring_retry_after(llm: LoopbackLLM) -> None:
    llm.script(Reply.rate_limited(retry_after=0.3), Reply.server_error(503), Reply.text("fine"))
    started = time.perf_counter()
    got = ask(_openai(llm))
    assert got.text == "fine" and got.calls == 3
    assert llm.count == 3
    assert time.perf_counter() - started >= 0.3


def test_openai_gives_up_after_retries(llm: LoopbackLLM) -> None:
    llm.script(*[Reply.server_error(500)] * 3)
    with pytest.raises(TargetError, match=r"HTTP 500.*after 3 attempts"):
        ask(_openai(llm))
    assert llm.count == 3


def test_openai_timeout_is_retried_then_reported(llm: LoopbackLLM) -> None:
    llm.script(Reply.slow(1.0, "late"), Reply.slow(1.0, "late"))
    policy = RetryPolicy(retries=1, timeout_s=0.2, backoff_s=0.01)
    target = OpenAIChatTarget("m", base_url=f"{llm.url}/v1", api_key="k", policy=policy)
    with pytest.raises(TargetError, match=r"timed out after 0.2 s \(after 2 attempts\)"):
        ask(target)


def test_openai_client_error_is_not_retried(llm: LoopbackLLM) -> None:
    llm.script(Reply(status=401, raw_body=b'{"error": "bad key"}'))
    with pytest.raises(TargetError, match="HTTP 401"):
        ask(_openai(llm))
    assert llm.count == 1


def test_openai_malformed_answer(llm: LoopbackLLM) -> None:
    llm.script(Reply.malformed())
    with pytest.raises(TargetError, match="answer is not JSON"):
        ask(_openai(llm))


def test_openai_key_and_base_url_from_environment(
    llm: LoopbackLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", llm.url)  # /v1 added, as the judges do
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    llm.script(Reply.text("hi"))
    target = build_target("openai:gpt-4o-mini", extra={"target_backoff_s": 0.01})
    assert ask(target).text == "hi"
    assert llm.requests[0].headers["authorization"] == "Bearer sk-env"


def test_openai_without_key_on_the_public_api_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(TargetConfigError, match="OPENAI_API_KEY is not set"):
        build_target("openai:gpt-4o-mini")


def test_openai_unknown_prompt_version(llm: LoopbackLLM) -> None:
    with pytest.raises(TargetConfigError, match=r"no system prompt 'v9'.*known versions: v1"):
        _openai(llm, prompt="v9")


def test_openai_can_include_context(llm: LoopbackLLM) -> None:
    llm.script(Reply.text("x"))
    ask(_openai(llm, include_context=True))
    assert llm.requests[0].body is not None
    assert "Acme Pro is $49 per month." in llm.requests[0].body["messages"][1]["content"]


# ------------------------------------------------------------------------- http endpoint


def test_http_renders_template_and_reads_answer_and_contexts(endpoint: Endpoint) -> None:
    endpoint.reply(
        200,
        {
            "data": {"choices": [{"text": "Acme Pro is $49."}]},
            "chunks": [{"content": "p1", "score": 0.9}, {"text": "p2"}, "p3"],
        },
    )
    target = HttpEndpointTarget(
        endpoint.url,
        body_template=(
            '{"q": "{{query}}", "sid": "{{id}}", "ctx": "{{context}}", '
            '"note": "lang={{metadata.lang}} tier={{metadata.user.tier}}", "opts": {"k": 3}}'
        ),
        answer_path="data.choices[0].text",
        contexts_path="$.chunks[*]",
        policy=FAST,
    )
    got = ask(target)
    assert got.text == "Acme Pro is $49."
    assert got.contexts == ("p1", "p2", "p3")
    assert endpoint.bodies[0] == {
        "q": 'What does "Acme Pro" cost?',
        "sid": "acme-q01",
        "ctx": ["Acme Pro is $49 per month."],
        "note": "lang=en tier=gold",
        "opts": {"k": 3},
    }
    assert got.latency_ms is not None


def test_http_default_template_and_answer_fields(endpoint: Endpoint) -> None:
    endpoint.reply(200, {"output": "from output"})
    target = build_target(f"http:{endpoint.url}", extra={"target_backoff_s": 0.01})
    assert ask(target).text == "from output"
    assert endpoint.bodies[0] == {"query": CASE.query}
    assert target.name == f"http:{endpoint.url}"


def test_http_retries_503_then_succeeds_and_honours_retry_after(endpoint: Endpoint) -> None:
    endpoint.reply(503, {"error": "busy"}, headers={"Retry-After": "0.25"})
    endpoint.reply(200, {"answer": "ok"})
    started = time.perf_counter()
    got = ask(HttpEndpointTarget(endpoint.url, policy=FAST))
    assert got.text == "ok" and got.calls == 2 and len(endpoint.bodies) == 2
    assert time.perf_counter() - started >= 0.25


def test_http_timeout_then_success(endpoint: Endpoint) -> None:
    endpoint.reply(200, {"answer": "late"}, delay=0.8)
    endpoint.reply(200, {"answer": "quick"})
    policy = RetryPolicy(retries=1, timeout_s=0.3, backoff_s=0.01)
    got = ask(HttpEndpointTarget(endpoint.url, policy=policy))
    assert got.text == "quick"


def test_http_400_is_not_retried(endpoint: Endpoint) -> None:
    endpoint.reply(400, {"error": "bad body"})
    with pytest.raises(TargetError, match=r"HTTP 400: .*bad body"):
        ask(HttpEndpointTarget(endpoint.url, policy=FAST))
    assert len(endpoint.bodies) == 1


def test_http_answer_missing_or_wrong_type(endpoint: Endpoint) -> None:
    endpoint.reply(200, {"nothing": 1})
    with pytest.raises(TargetError, match="no answer in the reply"):
        ask(HttpEndpointTarget(endpoint.url, policy=FAST))
    endpoint.reply(200, {"answer": {"nested": 1}})
    target = HttpEndpointTarget(endpoint.url, answer_path="$.answer", policy=FAST)
    with pytest.raises(TargetError, match=r"answer path \$\.answer holds dict, not text"):
        ask(target)
    endpoint.reply(200, {"data": []})
    target = HttpEndpointTarget(endpoint.url, answer_path="data[0].text", policy=FAST)
    with pytest.raises(TargetError, match=r"no element \[0\]"):
        ask(target)


def test_http_non_json_reply(endpoint: Endpoint) -> None:
    endpoint.reply(200, b"<html>oops</html>")
    with pytest.raises(TargetError, match="answer is not JSON"):
        ask(HttpEndpointTarget(endpoint.url, policy=FAST))


def test_http_missing_metadata_is_an_error_of_that_case(endpoint: Endpoint) -> None:
    target = HttpEndpointTarget(endpoint.url, body_template='{"x": "{{metadata.absent}}"}')
    with pytest.raises(TargetError, match="metadata has no 'absent'"):
        ask(target)
    assert endpoint.bodies == []


def test_http_bad_templates_are_refused_up_front() -> None:
    with pytest.raises(TargetConfigError, match="not valid JSON"):
        HttpEndpointTarget("http://127.0.0.1:1/x", body_template='{"q": {{query}}}')
    with pytest.raises(TargetConfigError, match=r"unknown placeholder \{\{question\}\}"):
        HttpEndpointTarget("http://127.0.0.1:1/x", body_template='{"q": "{{question}}"}')
    with pytest.raises(TargetConfigError, match="http:// or https:// URL"):
        build_target("http:ftp://x")
    with pytest.raises(TargetConfigError, match="bad JSON path"):
        JsonPath("a[x]")


def test_http_headers_from_environment(endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_TOKEN", "s3cret")
    target = build_target(
        f"http:{endpoint.url}",
        extra={"http_headers": {"Authorization": "Bearer {{env.RAG_TOKEN}}"}},
    )
    ask(target)
    assert endpoint.headers[0]["authorization"] == "Bearer s3cret"
    monkeypatch.delenv("RAG_TOKEN")
    with pytest.raises(TargetConfigError, match="environment variable RAG_TOKEN"):
        build_target(
            f"http:{endpoint.url}",
            extra={"http_headers": {"Authorization": "Bearer {{env.RAG_TOKEN}}"}},
        )


def test_connection_refused_is_reported() -> None:
    target = HttpEndpointTarget("http://127.0.0.1:9/x", policy=RetryPolicy(1, 1.0, 0.01))
    with pytest.raises(TargetError, match="connection failed"):
        ask(target)


# ------------------------------------------------------------------------- specs and helpers


def test_build_target_specs() -> None:
    assert build_target("recorded").name == "recorded"
    assert build_target("https://rag.example/q").name == "http:https://rag.example/q"
    with pytest.raises(TargetConfigError, match="unknown target 'gpt'"):
        build_target("gpt")
    with pytest.raises(TargetConfigError, match="target_timeout_s must be a number"):
        build_target("recorded", extra={"target_timeout_s": "soon"})


def test_retry_after_parsing() -> None:
    assert retry_after_seconds("2") == 2.0
    assert retry_after_seconds("9999") == 60.0
    assert retry_after_seconds(None) is None
    assert retry_after_seconds("garbage") is None
    future = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 30))
    got = retry_after_seconds(future)
    assert got is not None and 25 <= got <= 31


# ------------------------------------------------------------------------- one retry level, secrets


def test_giving_up_names_the_attempts_once(endpoint: Endpoint) -> None:
    for _ in range(3):
        endpoint.reply(503, {"error": "busy"})
    with pytest.raises(TargetError) as caught:
        ask(HttpEndpointTarget(endpoint.url, policy=FAST))
    assert str(caught.value) == (
        f"target http:{endpoint.url} on case 'acme-q01': "
        'HTTP 503: {"error": "busy"} (after 3 attempts)'
    )


def test_build_target_sizes_the_pool_to_the_concurrency(endpoint: Endpoint) -> None:
    target = build_target(f"http:{endpoint.url}", concurrency=7)
    assert isinstance(target, HttpEndpointTarget) and target._session.max_connections == 7
    assert ask(target).text == "ok"


def test_an_echoed_header_token_is_masked_in_the_error(
    endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = "tok-target-unit-4b6d8f0a"
    monkeypatch.setenv("UNIT_TOKEN", token)
    endpoint.reply(403, {"denied": f"Authorization: Bearer {token}"})
    target = build_target(
        f"http:{endpoint.url}",
        extra={"http_headers": {"Authorization": "Bearer {{env.UNIT_TOKEN}}"}},
    )
    with pytest.raises(TargetError) as caught:
        ask(target)
    assert endpoint.headers[0]["authorization"] == f"Bearer {token}"
    assert token not in str(caught.value) and "Bearer ***" in str(caught.value)


def test_env_values_in_the_body_and_url_are_sent_and_masked(
    endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UNIT_BODY_KEY", "body-key-1f2e3d4c")
    monkeypatch.setenv("UNIT_URL_KEY", "url-key-9a8b7c6d")
    endpoint.reply(500, {"echo": "body-key-1f2e3d4c url-key-9a8b7c6d"})
    target = HttpEndpointTarget(
        endpoint.url + "?key={{env.UNIT_URL_KEY}}",
        body_template='{"q": "{{query}}", "api_key": "{{env.UNIT_BODY_KEY}}"}',
        policy=RetryPolicy(retries=0, timeout_s=2.0, backoff_s=0.01),
    )
    assert target.name == f"http:{endpoint.url}?key={{{{env.UNIT_URL_KEY}}}}"
    with pytest.raises(TargetError) as caught:
        ask(target)
    assert endpoint.bodies[0] == {"q": CASE.query, "api_key": "body-key-1f2e3d4c"}
    assert str(caught.value).endswith('HTTP 500: {"echo": "*** ***"}')
    monkeypatch.delenv("UNIT_BODY_KEY")
    with pytest.raises(TargetConfigError, match="body template needs environment variable"):
        HttpEndpointTarget(endpoint.url, body_template='{"k": "{{env.UNIT_BODY_KEY}}"}')


def test_url_credentials_are_used_but_never_shown(endpoint: Endpoint) -> None:
    host = endpoint.url.removeprefix("http://")
    target = HttpEndpointTarget(f"http://bot:pw-target-5566@{host}", policy=FAST)
    assert target.name == f"http:http://bot:***@{host}"
    endpoint.reply(401, {"error": "user bot with pw-target-5566 is locked"})
    with pytest.raises(TargetError) as caught:
        ask(target)
    assert "pw-target-5566" not in str(caught.value)
    assert endpoint.headers[0]["authorization"].startswith("Basic ")


def test_candidate_endpoint_headers_take_env_secrets(
    endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    token = "tok-candidate-0d9c8b7a"
    monkeypatch.setenv("CANDIDATE_TOKEN", token)
    path = tmp_path / "base.md"
    path.write_text(
        "---\nrunner: http_endpoint\n"
        f"endpoint_url: {endpoint.url}\n"
        "endpoint_headers: {Authorization: 'Bearer {{env.CANDIDATE_TOKEN}}'}\n---\n",
        encoding="utf-8",
    )
    candidate = read_candidate_file(path, "rag")
    target = build_candidate_target(candidate, "recorded", options=TargetOptions(backoff_s=0.01))
    endpoint.reply(502, {"echo": f"Bearer {token}"})
    endpoint.reply(400, {"echo": f"Bearer {token}"})
    with pytest.raises(TargetError) as caught:
        ask(target)
    assert endpoint.headers[0]["authorization"] == f"Bearer {token}"
    assert str(caught.value).endswith('HTTP 400: {"echo": "Bearer ***"} (after 2 attempts)')
    monkeypatch.delenv("CANDIDATE_TOKEN")
    with pytest.raises(TargetConfigError, match=r"endpoint_headers.*CANDIDATE_TOKEN, unset"):
        build_candidate_target(candidate, "recorded")
