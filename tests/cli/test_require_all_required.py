"""``require_all_required: true`` (the response analyzer seed: fail if any required claim
is missing) fails the sample that misses one, and ``evalhouse check
--require-all-required`` gates a run on it: through the real ``evalhouse run`` with the
loopback judge (OpenAI wire format) that passes every answer, then ingest and check."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.lake import read_table
from engine.settings import Paths
from evalhouse.cli import main
from tests.cli.test_judge_repeats import _reply
from tests.loopback_llm import LoopbackLLM

PRICE = "Acme Pro costs $49 per month."
TRIAL = "There is a 14-day free trial."

CASES = [
    {
        "id": "states-both",
        "domain": "acme.com",
        "query": "How much does Acme Pro cost, and is there a trial?",
        "response": "Acme Pro costs $49 per month. There is a 14-day free trial.",
        "ai_provider": "gpt-x",
        "expected_answer": {
            "text": f"{PRICE} {TRIAL}",
            "claims": [
                {"id": "c1", "text": PRICE, "importance": "required"},
                {"id": "c2", "text": TRIAL, "importance": "expected"},
            ],
        },
        "context": [f"{PRICE} {TRIAL}"],
    },
    {
        "id": "misses-price",
        "domain": "acme.com",
        "query": "How much does Acme Pro cost, and is there a trial?",
        "response": "There is a 14-day free trial.",
        "ai_provider": "gpt-x",
        "expected_answer": {
            "text": f"{PRICE} {TRIAL}",
            "claims": [
                {"id": "c1", "text": PRICE, "importance": "required"},
                {"id": "c2", "text": TRIAL, "importance": "expected"},
            ],
        },
        "context": [f"{PRICE} {TRIAL}"],
    },
]


@pytest.fixture
def judge(monkeypatch: pytest.MonkeyPatch) -> Any:
    """A judge that gives every answer 5 of 5: whatever fails a sample here is the rule."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with LoopbackLLM(responder=lambda provider, body: _reply(5)) as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.url)
        yield llm


def _run(home: Paths, test_set: Path, name: str, capsys: Any, *extra: str) -> str:
    args = ["run", "--test-set", str(test_set), "--name", name, "--home", str(home.home),
            "--judge", "openai:gpt-4o-mini", "--no-ingest", *extra]  # fmt: skip
    assert main(args) == 0
    return str(capsys.readouterr().out.strip().splitlines()[-1])


def test_a_missing_required_claim_fails_the_sample_and_the_gate(
    home: Paths, tmp_path: Path, capsys: Any, judge: Any
) -> None:
    test_set = tmp_path / "cases.jsonl"
    test_set.write_text("".join(json.dumps(c) + "\n" for c in CASES))
    config = tmp_path / "strict.yaml"
    config.write_text("analyzer:\n  completeness:\n    require_all_required: true\n")
    lenient = _run(home, test_set, "lenient", capsys)
    strict = _run(home, test_set, "strict", capsys, "--config", str(config))

    def rows(run_id: str) -> dict[str, dict[str, Any]]:
        return {r["sample_id"]: r for r in read_table(home.lake, "results", run_id).to_pylist()}

    loose, tight = rows(lenient), rows(strict)
    # The judge passes the short answer.
    assert loose["misses-price"]["passed"] is True
    assert "missing_required_claim" not in loose["misses-price"]["flags"]
    # Required claims all required: the same answer fails; the complete one still passes.
    assert tight["misses-price"]["passed"] is False
    assert "missing_required_claim" in tight["misses-price"]["flags"]
    assert tight["states-both"]["passed"] is True
    assert "missing_required_claim" not in tight["states-both"]["flags"]

    assert main(["ingest", "--home", str(home.home)]) == 0
    capsys.readouterr()
    gate = ["check", "--home", str(home.home), "--require-all-required"]
    assert main([*gate, strict]) == 1
    out = capsys.readouterr().out
    assert "FAIL  every required claim found" in out
    # The gate reads the claims, so it holds for a run that did not set the option too.
    report = tmp_path / "gate.xml"
    assert main([*gate, lenient, "--format", "junit", "--output", str(report)]) == 1
    assert "FAIL  every required claim found  1" in capsys.readouterr().out
    assert "1 of 2 result rows with a required claim miss" in report.read_text()
    # The Samples list's "failed" filter lists the flagged answer.
    from warehouse.queries import Warehouse, run_samples

    wh = Warehouse(home.warehouse)
    failed = run_samples(wh, strict, outcome="failed")
    assert set(failed["sample_id"]) == {"misses-price"}


def test_the_gate_passes_when_every_required_claim_is_found(
    home: Paths, tmp_path: Path, capsys: Any, judge: Any
) -> None:
    test_set = tmp_path / "cases.jsonl"
    test_set.write_text(json.dumps(CASES[0]) + "\n")
    run_id = _run(home, test_set, "complete", capsys)
    assert main(["ingest", "--home", str(home.home)]) == 0
    capsys.readouterr()
    assert main(["check", run_id, "--home", str(home.home), "--require-all-required"]) == 0
    assert "ok    every required claim found" in capsys.readouterr().out


def test_nothing_to_check_names_the_new_option(home: Paths, capsys: Any) -> None:
    assert main(["check", "R", "--home", str(home.home)]) == 2
    assert "--require-all-required" in capsys.readouterr().err
