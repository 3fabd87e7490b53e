"""Alert rules of a run config, evaluated after each run: a breach posts once to a loopback
webhook (Slack's ``text`` field), stays quiet while it lasts, posts again when it clears,
and every change is an ``alerts`` row in the warehouse."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from evalhouse.cli import main
from warehouse.queries import Warehouse

CASES = [
    {"id": f"q{i}", "domain": "acme.com", "query": f"What does plan {i} cost?",
     "expected_answer": {"text": f"Plan {i} costs ${10 + i} per month.",
                         "claims": [{"id": "c1", "text": f"Plan {i} costs ${10 + i} per month."}]}}
    for i in range(3)
]  # fmt: skip
GOOD = "Plan {i} costs ${p} per month."
BAD = "Plan {i} is free forever, and also comes with a pony."


class Hook(BaseHTTPRequestHandler):
    """A webhook that keeps every JSON body it is sent."""

    received: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        Hook.received.append(json.loads(self.rfile.read(length)))
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def webhook() -> Iterator[str]:
    Hook.received = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hook"
    server.shutdown()
    server.server_close()


def _run(tmp: Path, home: str, name: str, answer: str, config: Path) -> int:
    path = tmp / f"{name}.jsonl"
    with open(path, "w", encoding="utf-8") as handle:
        for i, case in enumerate(CASES):
            handle.write(json.dumps({**case, "response": answer.format(i=i, p=10 + i)}) + "\n")
    args = ["run", "--test-set", str(path), "--name", name, "--series", "support"]
    return main([*args, "--config", str(config), "--home", home])


def test_a_breach_posts_once_and_its_end_posts_once(
    tmp_path: Path, webhook: str, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(
        "alerts:\n"
        f"  - {{name: completeness-floor, metric: completeness, min: 50, webhook: '{webhook}'}}\n"
        "  - {name: acme-completeness, metric: completeness, domain: acme.com, min: 50}\n",
        encoding="utf-8",
    )
    home = str(tmp_path / "home")
    for name, answer, posts in (("w1", BAD, 1), ("w2", BAD, 1), ("w3", GOOD, 2)):
        assert _run(tmp_path, home, name, answer, config) in (0, 1)
        assert len(Hook.received) == posts, name
    fired, cleared = Hook.received
    assert fired["text"].startswith(":rotating_light: evalhouse alert 'completeness-floor'")
    assert "below the minimum 50" in fired["text"] and "series 'support'" in fired["text"]
    assert fired["alert"]["state"] == "firing" and fired["alert"]["metric"] == "completeness"
    assert cleared["text"].startswith(":white_check_mark:")
    rows = (
        Warehouse(tmp_path / "home" / "warehouse.duckdb")
        .sql(
            "SELECT a.rule, a.state, a.notified, r.name FROM alerts a JOIN runs r USING (run_id) "
            "ORDER BY a.rule, a.evaluated_at"
        )
        .frame.rows()
    )
    assert rows == [
        ("acme-completeness", "firing", False, "w1"),  # no webhook: the row only
        ("acme-completeness", "cleared", False, "w3"),
        ("completeness-floor", "firing", True, "w1"),
        ("completeness-floor", "cleared", True, "w3"),
    ]
    assert "alert firing" in capsys.readouterr().err


def test_a_webhook_that_is_down_leaves_the_row_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(
        "alerts: [{name: floor, metric: completeness, min: 50, webhook: 'http://127.0.0.1:9/x'}]\n",
        encoding="utf-8",
    )
    home = str(tmp_path / "home")
    assert _run(tmp_path, home, "w1", BAD, config) in (0, 1)
    assert "webhook failed" in capsys.readouterr().err
    rows = (
        Warehouse(tmp_path / "home" / "warehouse.duckdb")
        .sql("SELECT state, notified, error IS NOT NULL AS failed FROM alerts")
        .frame.rows()
    )
    assert rows == [("firing", False, True)]


@pytest.mark.parametrize(
    ("rules", "reason"),
    [
        ("[{name: a, metric: accuracy}]", "exactly one of min or max"),
        ("[{name: a, metric: pass_rate, domain: acme.com, min: 1}]", "a domain rule watches"),
        ("[{name: a, metric: accuracy, min: 1, webhook: 'ftp://x'}]", "http(s) URL"),
        ("{name: a}", "must be a list of rules"),
    ],
)
def test_a_bad_rule_refuses_the_run_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rules: str, reason: str
) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(f"alerts: {rules}\n", encoding="utf-8")
    assert _run(tmp_path, str(tmp_path / "home"), "w1", GOOD, config) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and reason in lines[0], lines
    assert not (tmp_path / "home" / "lake").exists()
