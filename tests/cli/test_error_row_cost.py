"""An error row carries what its answered judge calls cost: a loopback judge (OpenAI wire
format) answers the rubric prompt and then fails the sample's next prompt; the calls it
answered were paid, and the result row says so in tokens and dollars."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.lake import read_table
from engine.pricing import PriceTable
from engine.settings import Paths
from evalhouse.cli import main
from tests.cli.test_judge_repeats import RUBRIC, _reply, _test_set
from tests.loopback_llm import LoopbackLLM, Reply

TOKENS_IN, TOKENS_OUT = 120, 30
"""Tokens the loopback reports for every answered call."""


class RubricThenFail:
    """Answers the rubric prompt; refuses every other prompt (HTTP 400, not retried),
    late enough that the rubric's answer is in before the refusal."""

    def __call__(self, provider: str, body: dict[str, Any]) -> Reply:
        text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        if RUBRIC in text or RUBRIC in str(body.get("system", "")):
            return Reply(
                content=_reply(5).content, input_tokens=TOKENS_IN, output_tokens=TOKENS_OUT
            )
        return Reply(status=400, raw_body=b'{"error": {"message": "bad request"}}', delay=0.3)


def test_error_rows_keep_the_cost_of_the_calls_answered_before_the_error(
    home: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    test_set = _test_set(tmp_path)
    with LoopbackLLM(responder=RubricThenFail()) as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.url)
        args = ["run", "--test-set", str(test_set), "--name", "paid", "--home",
                str(home.home), "--no-ingest", "--judge", "openai:gpt-4o-mini"]  # fmt: skip
        # every judged sample errs, so the run as a whole fails: its rows are still written
        assert main(args) == 1
        run_id = capsys.readouterr().out.strip().splitlines()[-1]
        answered = sum(RUBRIC in r.prompt_text for r in llm.requests)
    rows = read_table(home.lake, "results", run_id).to_pylist()
    failed = [r for r in rows if r["error"] and "judge" in r["error"]]
    assert len(failed) == len(rows), "the loopback fails every judged sample"
    assert answered > 0, "some rubric calls are answered before the failures"
    # Every paid call is on the row of the sample it was made for, though that row errs.
    assert sum(r["judge_input_tokens"] for r in rows) == answered * TOKENS_IN
    assert sum(r["judge_output_tokens"] for r in rows) == answered * TOKENS_OUT
    one = PriceTable().cost("gpt-4o-mini", TOKENS_IN, TOKENS_OUT)
    assert one > 0
    for r in rows:
        calls, rest = divmod(r["judge_input_tokens"], TOKENS_IN)
        assert rest == 0
        assert r["cost_usd"] == pytest.approx(calls * one)
    assert sum(r["cost_usd"] for r in rows) == pytest.approx(answered * one)
