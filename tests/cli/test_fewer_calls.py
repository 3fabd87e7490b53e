"""--cascade and --until-ci through the real `evalhouse run` (OpenAI-wire judge on a
loopback server, local analyzer and local judge)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from engine.demo import build_weekly_test_sets
from engine.lake import read_table
from engine.run.metrics import ci_width
from engine.settings import Paths, resolve_paths
from evalhouse.cli import main
from tests.loopback_llm import LoopbackLLM, Reply


def _oracle(provider: str, body: dict[str, Any]) -> Reply:
    """A judge whose rubric passes answers that state the page's price and fails others."""
    prompt = json.dumps(body.get("messages", []))
    good = "12 per user per month" in prompt.split("ANSWER")[-1]
    score = 5 if good else 2
    return Reply.json(
        {
            "claims": ["The answer states a fact."],
            "verdict": "SUPPORTED",
            # a batched verification (the default) of the one claim above
            "verdicts": [{"claim": 1, "verdict": "SUPPORTED", "evidence": "", "passages": [1]}],
            "evidence": "page",
            "faithfulness": {"score": score, "reasoning": "r"},
            "completeness": {"score": score, "reasoning": "r"},
            "score": score,
            "reasoning": "r",
            "used": True,
        }
    )


def _demo(tmp_path: Path, n: int) -> Path:
    _name, test_set, _date = build_weekly_test_sets(tmp_path / "sets", weeks=1)[0]
    small = tmp_path / "small.jsonl"
    small.write_text("".join(test_set.read_text().splitlines(keepends=True)[:n]))
    return small


def _run(home: Paths, test_set: Path, name: str, capsys: Any, *extra: str) -> str:
    code = main(
        ["run", "--test-set", str(test_set), "--name", name, "--judge", "openai:gpt-4o-mini",
         "--home", str(home.home), "--no-ingest", *extra]
    )  # fmt: skip
    assert code == 0
    return str(capsys.readouterr().out.strip().splitlines()[-1])


def test_cascade_calls_the_llm_less_with_the_same_clear_decisions(
    home: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    other = resolve_paths(tmp_path / "home2")  # its own judge cache: no free answers
    test_set = _demo(tmp_path, 12)
    with LoopbackLLM(responder=_oracle) as llm:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("OPENAI_BASE_URL", llm.url)
        full_id = _run(home, test_set, "full", capsys)
        full_calls = llm.count
        cascade_id = _run(other, test_set, "cascade", capsys, "--cascade")
        cascade_calls = llm.count - full_calls
    full = {r["sample_id"]: r for r in read_table(home.lake, "results", full_id).to_pylist()}
    cascaded = read_table(other.lake, "results", cascade_id).to_pylist()
    assert {r["scored_by"] for r in full.values()} == {"llm"}
    paths = [r["scored_by"] for r in cascaded]
    assert "local" in paths and set(paths) <= {"local", "llm"}
    assert cascade_calls < full_calls
    llm_rows = [r for r in cascaded if r["scored_by"] == "llm"]
    for row in llm_rows:
        assert row["passed"] == full[row["sample_id"]]["passed"]
    clear = [r for r in cascaded if r["scored_by"] == "local"]
    agree = sum(r["passed"] == full[r["sample_id"]]["passed"] for r in clear)
    assert agree == len(clear), f"{agree} of {len(clear)} clear decisions agree"


def test_estimate_shows_the_cascade_saving(
    home: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    test_set = _demo(tmp_path, 12)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    args = ["run", "--test-set", str(test_set), "--name", "e", "--judge", "openai:gpt-4o-mini",
            "--home", str(home.home), "--estimate"]  # fmt: skip
    assert main(args) == 0
    plain = capsys.readouterr().out
    assert main([*args, "--cascade"]) == 0
    cascaded = capsys.readouterr().out
    calls = [int(o.split("judge calls:")[1].split()[0].replace(",", "")) for o in (plain, cascaded)]
    assert calls[1] < calls[0]
    assert f"instead of {calls[0]:,}" in cascaded


def test_ci_width_by_hand() -> None:
    # means 70, 72, 74: s = 2, n = 3, t(0.975, 2) = 4.303 -> 2 * 4.303 * 2 / sqrt(3)
    assert math.isclose(ci_width([70, 72, 74]) or 0, 2 * 4.303 * 2 / math.sqrt(3))
    assert ci_width([70]) is None
    assert ci_width([5.0, 5.0]) == 0.0


def test_until_ci_stops_when_the_interval_is_narrow(
    home: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Recorded answers and the local judge: every iteration scores the same, so the
    # interval is 0 wide after two iterations and the run stops there, not at ten.
    test_set = _demo(tmp_path, 4)
    code = main(
        ["run", "--test-set", str(test_set), "--name", "ci", "--home", str(home.home),
         "--no-ingest", "--iterations", "10", "--until-ci", "accuracy=0.5"]
    )  # fmt: skip
    assert code == 0
    run_id = capsys.readouterr().out.strip().splitlines()[-1]
    results = read_table(home.lake, "results", run_id).to_pylist()
    assert sorted({r["iteration"] for r in results}) == [1, 2]


def test_until_ci_bad_metric_is_one_line_exit_2(
    home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    test_set = _demo(tmp_path, 2)
    code = main(["run", "--test-set", str(test_set), "--name", "x", "--home", str(home.home),
                 "--until-ci", "acuracy=2"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "--until-ci" in err and "acuracy" in err and len(err.splitlines()) == 1
