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
    assert "webhook 127.0.0.1:9 failed" in capsys.readouterr().err
    rows = (
        Warehouse(tmp_path / "home" / "warehouse.duckdb")
        .sql("SELECT state, notified, error IS NOT NULL AS failed FROM alerts")
        .frame.rows()
    )
    assert rows == [("firing", False, True)]


@pytest.mark.parametrize(
    ("rules", "reason"),
    [
        ("[{name: a, metric: accuracy}]", "exactly one of min, max or worse_than_baseline"),
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


def test_worse_than_baseline_beyond_noise_fires_on_the_run_that_regressed(
    tmp_path: Path, webhook: str
) -> None:
    """The series' previous run is the baseline; eight paired samples all worse put the
    whole 95% interval of the change below zero."""
    config = tmp_path / "run.yaml"
    config.write_text(
        "alerts:\n"
        f"  - {{name: accuracy-drop, metric: accuracy, worse_than_baseline: true, "
        f"webhook: '{webhook}'}}\n"
        "  - {name: acme-drop, metric: accuracy, domain: acme.com, worse_than_baseline: true}\n",
        encoding="utf-8",
    )
    home = str(tmp_path / "home")
    eight = [{**CASES[0], "id": f"r{i}"} for i in range(8)]

    def run(name: str, answer: str) -> int:
        path = tmp_path / f"{name}.jsonl"
        path.write_text(
            "".join(json.dumps({**c, "response": answer.format(i=0, p=10)}) + "\n" for c in eight)
        )
        args = ["run", "--test-set", str(path), "--name", name, "--series", "regress"]
        return main([*args, "--config", str(config), "--home", home])

    for name, answer, posts in (("w1", GOOD, 0), ("w2", BAD, 1), ("w3", GOOD, 2)):
        assert run(name, answer) in (0, 1)
        assert len(Hook.received) == posts, name
    fired, cleared = Hook.received
    assert "'accuracy-drop': accuracy is worse than the baseline beyond noise" in fired["text"]
    assert fired["alert"]["threshold"] == 0.0 and fired["alert"]["value"] < 0
    assert "cleared" in cleared["text"]
    rows = (
        Warehouse(Path(home) / "warehouse.duckdb")
        .sql("SELECT rule, state FROM alerts ORDER BY evaluated_at, rule")
        .frame.rows()
    )
    assert rows == [
        ("accuracy-drop", "firing"),
        ("acme-drop", "firing"),
        ("accuracy-drop", "cleared"),
        ("acme-drop", "cleared"),
    ]


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ("{name: a, metric: accuracy, min: 5, worse_than_baseline: true}", "exactly one of"),
        ("{name: a, metric: cost_usd, worse_than_baseline: true}", "worse_than_baseline watches"),
    ],
)
def test_a_bad_baseline_rule_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rule: str, message: str
) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(f"alerts:\n  - {rule}\n", encoding="utf-8")
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({**CASES[0], "response": "x"}) + "\n")
    args = ["run", "--test-set", str(path), "--name", "n", "--config", str(config)]
    assert main([*args, "--home", str(tmp_path / "home")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_the_overview_shows_what_is_firing(
    tmp_path: Path, webhook: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from streamlit.testing.v1 import AppTest

    from tests.dashboard.conftest import APP

    config = tmp_path / "run.yaml"
    config.write_text(
        "alerts:\n  - {name: accuracy-drop, metric: accuracy, worse_than_baseline: true}\n"
        "  - {name: completeness-floor, metric: completeness, min: 50}\n",
        encoding="utf-8",
    )
    home = tmp_path / "home"
    eight = [{**CASES[0], "id": f"r{i}"} for i in range(8)]
    for name, answer in (("w1", GOOD), ("w2", BAD)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text(
            "".join(json.dumps({**c, "response": answer.format(i=0, p=10)}) + "\n" for c in eight)
        )
        args = ["run", "--test-set", str(path), "--name", name, "--series", "regress"]
        main([*args, "--config", str(config), "--home", str(home)])
    monkeypatch.setenv("EVALHOUSE_HOME", str(home))
    at = AppTest.from_file(APP, default_timeout=30)
    at.run()
    assert not at.exception
    shown = [w.value for w in at.warning]
    assert any(
        "Alert 'accuracy-drop' firing since" in w and "worse than its baseline beyond noise" in w
        for w in shown
    ), shown
    floor = "Alert 'completeness-floor' firing since"
    assert any(floor in w and "(minimum 50)" in w for w in shown)
