"""Secrets never reach the lake, the warehouse, the caches, the progress files or the logs.

A real `evalhouse run` with a planted secret in the environment: an OpenAI-wire judge's
key (a loopback judge), and an HTTP target header ``Bearer {{env.MY_TOKEN}}`` sent to an
endpoint that echoes the request's headers in its error bodies; then ingest; then every
file under the home and everything printed is searched for the secret.
"""

from __future__ import annotations

import base64
import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from engine.demo import build_weekly_test_sets
from engine.settings import Paths
from evalhouse.cli import main
from tests.loopback_llm import LoopbackLLM, Reply

PLANTED = "sk-planted-0123456789abcdef-DO-NOT-LEAK"

JUDGE_REPLY = {
    "claims": ["The product costs $12 per user per month."],
    "verdict": "SUPPORTED",
    # a batched verification (the default) of the one claim above
    "verdicts": [{"claim": 1, "verdict": "SUPPORTED", "evidence": "", "passages": [1]}],
    "evidence": "pricing page",
    "faithfulness": {"score": 4, "reasoning": "grounded"},
    "completeness": {"score": 4, "reasoning": "explains"},
    "score": 4,
    "reasoning": "ok",
    "used": True,
}


def test_planted_key_is_nowhere(
    home: Paths,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    _name, test_set, _date = build_weekly_test_sets(tmp_path / "sets", weeks=1)[0]
    small = tmp_path / "small.jsonl"
    small.write_text("".join(test_set.read_text().splitlines(keepends=True)[:6]))
    with LoopbackLLM() as llm:
        llm.responder = lambda provider, body: Reply.json(JUDGE_REPLY)
        monkeypatch.setenv("OPENAI_API_KEY", PLANTED)
        monkeypatch.setenv("OPENAI_BASE_URL", llm.url)
        code = main(
            [
                "run",
                "--test-set",
                str(small),
                "--name",
                "secret check",
                "--judge",
                "openai:gpt-4o-mini",
                "--home",
                str(home.home),
            ]
        )
        assert llm.count > 0  # the judge really was called with the key
    assert code == 0
    printed = capsys.readouterr()
    assert PLANTED not in printed.out + printed.err
    assert PLANTED not in caplog.text
    files = [p for p in home.home.rglob("*") if p.is_file()]
    assert any(p.suffix == ".parquet" for p in files)
    assert home.warehouse in files
    for path in files:
        assert PLANTED.encode() not in path.read_bytes(), path
    # the run says which judge scored it; its stored config names no key
    assert (
        main(
            ["sql", "SELECT judge, config FROM runs", "--format", "json", "--home", str(home.home)]
        )
        == 0
    )
    (row,) = json.loads(capsys.readouterr().out)
    assert row["judge"].startswith("openai:gpt-4o-mini")
    assert PLANTED not in row["config"]


# ----------------------------------------------------------------------------- http target

TOKEN = "tok-planted-9f8e7d6c5b4a-DO-NOT-LEAK"


class EchoHeaders(BaseHTTPRequestHandler):
    """A RAG endpoint that refuses every request and echoes the request's headers in the
    error body, as some misconfigured gateways do: 401 for the queries in ``denied``, 503
    (retried, then given up) for the others."""

    protocol_version = "HTTP/1.1"
    calls = 0
    denied: frozenset[str] = frozenset()

    def log_message(self, *args: object) -> None:
        return

    def do_POST(self) -> None:
        query = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        type(self).calls += 1
        echoed = {k: v for k, v in self.headers.items()}
        # Every form a gateway might echo: as sent, inside JSON, and base64 of the token.
        body = json.dumps(
            {
                "error": "upstream refused the request",
                "request_headers": echoed,
                "debug": f"auth={self.headers.get('Authorization')} "
                f"b64={base64.b64encode(TOKEN.encode()).decode()}",
            }
        ).encode()
        status = 401 if query.get("query") in self.denied else 503
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_env_templated_header_token_is_nowhere(
    home: Paths,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    _name, test_set, _date = build_weekly_test_sets(tmp_path / "sets", weeks=1)[0]
    small = tmp_path / "small.jsonl"
    lines = test_set.read_text().splitlines(keepends=True)[:4]
    small.write_text("".join(lines))
    monkeypatch.setenv("MY_TOKEN", TOKEN)
    EchoHeaders.calls = 0
    EchoHeaders.denied = frozenset({json.loads(lines[0])["query"]})
    server = ThreadingHTTPServer(("127.0.0.1", 0), EchoHeaders)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/ask"
    try:
        code = main(
            [
                "run",
                "--test-set",
                str(small),
                "--name",
                "header secret",
                "--target",
                f"http:{url}",
                "--option",
                'http_headers={"Authorization": "Bearer {{env.MY_TOKEN}}"}',
                "--option",
                "target_backoff_s=0.01",
                "--home",
                str(home.home),
            ]
        )
    finally:
        server.shutdown()
        server.server_close()
    # one call for each denied case, three for each of the others (two retries)
    queries = [json.loads(line)["query"] for line in lines]
    denied = sum(q in EchoHeaders.denied for q in queries)
    assert 0 < denied < len(queries)
    assert EchoHeaders.calls == denied + 3 * (len(queries) - denied)
    assert code == 1  # every sample failed: the run says so
    printed = capsys.readouterr()
    assert TOKEN not in printed.out + printed.err
    assert TOKEN not in caplog.text
    files = [p for p in home.home.rglob("*") if p.is_file()]
    assert any(p.suffix == ".parquet" for p in files)
    assert home.warehouse in files
    assert any("progress" in p.parts for p in files)
    b64 = base64.b64encode(TOKEN.encode())
    for path in files:
        data = path.read_bytes()
        assert TOKEN.encode() not in data and b64 not in data, path
    # the error rows say what went wrong, with the token masked
    assert (
        main(["sql", "SELECT error FROM results", "--format", "json", "--home", str(home.home)])
        == 0
    )
    errors = [row["error"] for row in json.loads(capsys.readouterr().out)]
    assert errors and all(e and "Bearer ***" in e for e in errors)
    assert sum("HTTP 401" in e and "attempts" not in e for e in errors) == denied
    assert (
        sum("HTTP 503" in e and e.endswith("(after 3 attempts)") for e in errors)
        == len(queries) - denied
    )
