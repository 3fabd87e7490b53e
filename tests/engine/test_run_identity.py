"""Run identity: a URL password never reaches runs.config, and such a run still resumes."""

from __future__ import annotations

import json
import socket
from datetime import datetime
from pathlib import Path

import pytest

from engine.lake import read_table, write_part
from engine.models import RunConfig
from engine.run.identity import resolve_run
from engine.settings import Paths
from evalhouse.cli import main
from tests.factories import run_record


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_target_url_password_is_masked_in_the_stored_config_and_the_run_resumes(
    home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    password = "Pw-Never-Stored-91"
    target = f"http:http://bot:{password}@127.0.0.1:{_closed_port()}/ask"
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        json.dumps({"id": "a", "query": "q?", "expected_answer": {"text": "yes"}}) + "\n",
        encoding="utf-8",
    )
    args = ["run", "--home", str(home.home), "--test-set", str(cases), "--name", "secret",
            "--target", target, "--retries", "0", "--no-ingest", "--max-failed", "1"]  # fmt: skip
    assert main(args) == 0
    out, err = capsys.readouterr()
    run_id = out.strip().splitlines()[-1]
    assert password not in out + err
    for part in home.lake.rglob("*.parquet"):
        assert password.encode() not in part.read_bytes(), part
    stored = read_table(home.lake, "runs", run_id, 0).to_pylist()[-1]["config"]
    assert "bot:***@127.0.0.1" in stored
    # The stored (masked) config still identifies the run the same command asks for.
    asked = RunConfig(name="secret", test_set=str(cases), target=target, retries=0,
                      max_failed_fraction=1.0)  # fmt: skip
    write_part(home.lake, "runs", run_id, 0, [run_record(
        run_id, name="secret", status="interrupted", test_set_hash=read_table(
            home.lake, "runs", run_id, 0).to_pylist()[-1]["test_set_hash"],
        config=stored, updated_at=datetime(2099, 1, 1),
    )])  # fmt: skip
    identity = resolve_run(
        home,
        asked,
        read_table(home.lake, "runs", run_id, 0).to_pylist()[-1]["test_set_hash"],
        resume_run_id=None,
        now=datetime(2026, 1, 1),
    )
    identity.lock.release()
    assert identity.run_id == run_id and identity.resumed
