"""Alert webhooks under attack: a hook that trickles its answer cannot hold a pass past
one deadline, a bad URL (config or environment) refuses the run before it starts, the URL
(a credential) is never stored or printed, only its host, and rule names and series reach
Slack escaped."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

import engine.webhooks
from engine.webhooks import WebhookPass, slack_escape, webhook_problem
from tests.hostile.conftest import assert_refused, cli
from warehouse.queries import Warehouse

CASES = [
    {"id": f"q{i}", "domain": "acme.com", "query": f"What does plan {i} cost?",
     "response": f"Plan {i} is free forever, and also comes with a pony.",
     "expected_answer": {"text": f"Plan {i} costs ${10 + i} per month.",
                         "claims": [{"id": "c1", "text": f"Plan {i} costs ${10 + i} per month."}]}}
    for i in range(3)
]  # fmt: skip
"""Answers that miss every claim: a completeness floor fires on the first run."""

SECRET_PATH = "/services/T000/B000/XXXXsecretXXXX"


class Hook(BaseHTTPRequestHandler):
    """A webhook that keeps every JSON body; when ``trickle`` it answers one byte every
    two seconds (the red team's hook)."""

    received: ClassVar[list[dict[str, Any]]] = []
    trickle: ClassVar[bool] = False

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        Hook.received.append(json.loads(self.rfile.read(length)))
        self.send_response(200)
        self.send_header("content-length", "100")
        self.end_headers()
        try:
            for _ in range(100 if Hook.trickle else 1):
                self.wfile.write(b"o")
                self.wfile.flush()
                if Hook.trickle:
                    time.sleep(2)
        except OSError:  # the client gave up, as it should
            return
        if not Hook.trickle:
            self.wfile.write(b"k" * 99)

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def hook() -> Iterator[str]:
    Hook.received, Hook.trickle = [], False
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}{SECRET_PATH}"
    server.shutdown()
    server.server_close()


def _config(tmp_path: Path, rules: str) -> Path:
    config = tmp_path / "run.yaml"
    config.write_text(f"alerts:\n{rules}", encoding="utf-8")
    return config


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], config: Path, *extra: str) -> Any:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in CASES), encoding="utf-8")
    return cli(
        capsys, "run", "--test-set", str(path), "--name", "w1", "--series", "support",
        "--config", str(config), "--home", str(tmp_path / "home"), *extra,
    )  # fmt: skip


def _alert_rows(tmp_path: Path) -> list[tuple[Any, ...]]:
    db = Warehouse(tmp_path / "home" / "warehouse.duckdb")
    return db.sql("SELECT rule, notified, error, message FROM alerts ORDER BY rule").frame.rows()


def test_a_trickling_hook_holds_a_pass_no_longer_than_its_deadline(
    tmp_path: Path, hook: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two rules fire to a hook that sends one byte every 2 s: both posts together stop at
    the pass's deadline (shortened here to 3 s; the second post is not even sent)."""
    Hook.trickle = True
    monkeypatch.setattr(engine.webhooks, "PASS_DEADLINE_S", 3.0)
    config = _config(
        tmp_path,
        f"  - {{name: a, metric: completeness, min: 50, webhook: '{hook}'}}\n"
        f"  - {{name: b, metric: accuracy, min: 50, webhook: '{hook}'}}\n",
    )
    started = time.monotonic()
    outcome = _run(tmp_path, capsys, config)
    took = time.monotonic() - started
    assert outcome.code in (0, 1) and "Traceback" not in outcome.err
    assert took < 20, took  # the run itself is seconds; the hook alone would take 123 s
    rows = _alert_rows(tmp_path)
    assert [(r[0], r[1]) for r in rows] == [("a", False), ("b", False)]
    assert "within this pass's 3 s" in rows[0][2] and "were spent" in rows[1][2]
    assert len(Hook.received) == 1


def test_the_default_deadline_is_the_documented_half_minute() -> None:
    assert engine.webhooks.PASS_DEADLINE_S <= 30.0
    assert engine.webhooks.WEBHOOK_POLICY.deadline <= engine.webhooks.PASS_DEADLINE_S
    started = time.monotonic()
    assert WebhookPass(0.0).post("http://127.0.0.1:9/x", "t", {}) is not None
    assert time.monotonic() - started < 1.0  # a spent pass sends nothing


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://127.0.0.1:70000/T0/B0/XXXXsecretXXXX", "port out of range"),
        ("http://127.0.0.1:0/T0/B0/XXXXsecretXXXX", "port out of range"),
        ("http://127.0.0.1:abc/T0/B0/XXXXsecretXXXX", "port is not a number"),
        ("ftp://hooks.example/T0/B0/XXXXsecretXXXX", "http(s) URL"),
        ("http:///T0/B0/XXXXsecretXXXX", "names no host"),
        ("http://[::1/T0/B0/XXXXsecretXXXX", "not a valid URL"),
        ("http://hooks.example/XXXXsecretXXXX\n", "control characters"),
    ],
)
def test_a_bad_url_refuses_the_run_from_config_and_environment_alike(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    url: str,
    reason: str,
) -> None:
    assert webhook_problem(url) is not None
    quoted = json.dumps(url)
    rule = f"  - {{name: a, metric: completeness, min: 50, webhook: {quoted}}}\n"
    config = _config(tmp_path, rule)
    line = assert_refused(_run(tmp_path, capsys, config), mentions=reason)
    assert "XXXXsecretXXXX" not in line and "alerts[0]" in line
    if url.strip() != url:  # the variable is read stripped: a trailing newline is forgiven
        return
    monkeypatch.setenv("EVALHOUSE_ALERT_WEBHOOK", url)
    config = _config(tmp_path, "  - {name: a, metric: completeness, min: 50}\n")
    outcome = _run(tmp_path, capsys, config)
    line = assert_refused(outcome, mentions="$EVALHOUSE_ALERT_WEBHOOK")
    assert reason in line and "XXXXsecretXXXX" not in line
    assert not (tmp_path / "home" / "lake").exists()  # refused before the run


def test_the_url_is_never_stored_or_printed_only_its_host(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hook that is down: the row's error and the line printed name 127.0.0.1:9 and the
    reason, never the URL's path (where Slack keeps the token)."""
    monkeypatch.setenv("EVALHOUSE_ALERT_WEBHOOK", f"http://127.0.0.1:9{SECRET_PATH}")
    config = _config(tmp_path, "  - {name: a, metric: completeness, min: 50}\n")
    outcome = _run(tmp_path, capsys, config)
    assert "XXXXsecretXXXX" not in outcome.out + outcome.err
    assert "webhook 127.0.0.1:9 failed" in outcome.err
    ((_, notified, error, _),) = _alert_rows(tmp_path)
    assert not notified and error.startswith("webhook 127.0.0.1:9 failed: ")
    lake = b"".join(p.read_bytes() for p in (tmp_path / "home" / "lake").rglob("*.parquet"))
    assert b"XXXXsecretXXXX" not in lake
    assert b"XXXXsecretXXXX" not in (tmp_path / "home" / "warehouse.duckdb").read_bytes()


def test_slack_text_is_escaped(
    tmp_path: Path, hook: str, capsys: pytest.CaptureFixture[str]
) -> None:
    name = "<!channel> see <https://evil.example|the docs> & <@U123>"
    config = _config(
        tmp_path,
        f"  - {{name: {json.dumps(name)}, metric: completeness, min: 50, webhook: '{hook}'}}\n",
    )
    outcome = _run(tmp_path, capsys, config)
    assert outcome.code in (0, 1)
    (body,) = Hook.received
    text = body["text"]
    assert "<" not in text and ">" not in text
    assert "&lt;!channel&gt;" in text and "&lt;https://evil.example|the docs&gt;" in text
    assert "&amp; &lt;@U123&gt;" in text
    assert body["alert"]["rule"] == name  # the structured record keeps the name as it is
    assert slack_escape("a&b<c>d") == "a&amp;b&lt;c&gt;d"
