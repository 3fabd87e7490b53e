"""API keys never reach the lake, the warehouse, the caches or the logs.

A real `evalhouse run` with an OpenAI-wire judge (a loopback server) and a planted key in
the environment; then ingest; then every file under the home and everything printed is
searched for the key.
"""

from __future__ import annotations

import json
import logging
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
