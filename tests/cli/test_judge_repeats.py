"""Judges asked again, and juries, through the real `evalhouse run` against a loopback
judge speaking the OpenAI and Anthropic wire formats: every repeat is a fresh call, a
re-run of the same settings costs none, the asks' spread and flips reach the warehouse."""

from __future__ import annotations

import threading
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from engine.demo import build_weekly_test_sets
from engine.lake import read_table
from engine.settings import Paths
from evalhouse.cli import main
from tests.loopback_llm import LoopbackLLM, Reply, Request
from warehouse.queries import Warehouse
from warehouse.reliability_queries import judge_reliability, jury_agreement

CASES = 6
REPEATS = 3
RUBRIC = "You are a strict evaluator of answers"
"""The start of the rubric prompt's system text."""


def _reply(score: int) -> Reply:
    """An answer to every judge prompt, its scores all ``score`` (1-5)."""
    return Reply.json(
        {
            "claims": ["The answer states a fact."],
            "verdict": "SUPPORTED",
            "verdicts": [{"claim": 1, "verdict": "SUPPORTED", "evidence": "", "passages": [1]}],
            "evidence": "page",
            "faithfulness": {"score": score, "reasoning": "r"},
            "completeness": {"score": score, "reasoning": "r"},
            "score": score,
            "reasoning": "r",
            "used": True,
        }
    )


class FlakyJudge:
    """Answers an answer's rubric by how often the same prompt was asked before: every
    second ask of about half the answers (chosen by the prompt's checksum) scores 2 (a
    fail), every other ask 5. Keyed by the prompt, not by arrival order: with a seeded
    draw per call, the calls' interleaving decided which answer flipped, and once none
    did."""

    def __init__(self) -> None:
        self.asked: Counter[str] = Counter()
        self.lock = threading.Lock()

    def __call__(self, provider: str, body: dict[str, Any]) -> Reply:
        prompt = Request("", {}, body).prompt_text
        with self.lock:
            earlier = self.asked[prompt]
            self.asked[prompt] += 1
        flips = zlib.crc32(prompt.encode()) % 2 == 0
        return _reply(2 if flips and earlier % 2 == 1 else 5)


def _test_set(tmp_path: Path) -> Path:
    _name, test_set, _date = build_weekly_test_sets(tmp_path / "sets", weeks=1)[0]
    small = tmp_path / "small.jsonl"
    small.write_text("".join(test_set.read_text().splitlines(keepends=True)[:CASES]))
    return small


def _run(home: Paths, test_set: Path, name: str, capsys: Any, *extra: str) -> str:
    args = ["run", "--test-set", str(test_set), "--name", name, "--home", str(home.home),
            "--no-ingest", *extra]  # fmt: skip
    assert main(args) == 0
    return str(capsys.readouterr().out.strip().splitlines()[-1])


def _rubric_calls(llm: LoopbackLLM, start: int, stop: int) -> int:
    """Calls of the rubric prompt among requests ``start:stop`` (one per ask of an answer)."""
    return sum(RUBRIC in r.prompt_text for r in llm.requests[start:stop])


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")


def test_repeats_ask_again_flag_flips_and_a_rerun_costs_nothing(
    home: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any, keys: None
) -> None:
    test_set = _test_set(tmp_path)
    with LoopbackLLM(responder=FlakyJudge()) as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.url)
        once = _run(home, test_set, "once", capsys, "--judge", "openai:gpt-4o-mini")
        single_calls = llm.count
        single_temperatures = {r.body["temperature"] for r in llm.requests if r.body}
        run_id = _run(home, test_set, "thrice", capsys, "--judge", "openai:gpt-4o-mini",
                      "--judge-repeats", str(REPEATS))  # fmt: skip
        repeat_calls = llm.count - single_calls
        temperatures = {r.body["temperature"] for r in llm.requests[single_calls:] if r.body}
        # The same settings again: every ask is in the cache, not one call is made.
        before = llm.count
        again = _run(home, test_set, "thrice", capsys, "--judge", "openai:gpt-4o-mini",
                     "--judge-repeats", str(REPEATS))  # fmt: skip
        assert llm.count == before
    assert once != run_id != again
    assert single_temperatures == {0.0} and temperatures == {1.0}
    # One rubric call per ask: every repeat was a call of its own (at temperature 1 the
    # first ask too is not the single run's, asked at 0).
    assert _rubric_calls(llm, 0, single_calls) == CASES
    assert _rubric_calls(llm, single_calls, single_calls + repeat_calls) == CASES * REPEATS

    asks = read_table(home.lake, "judge_asks", run_id).to_pylist()
    passed = [a for a in asks if a["metric"] == "passed"]
    assert len(passed) == CASES * REPEATS
    by_sample: dict[str, set[bool]] = {}
    for a in passed:
        by_sample.setdefault(a["sample_id"], set()).add(a["passed"])
    flipping = {s for s, votes in by_sample.items() if len(votes) > 1}
    # some answers flip and some do not, whatever order the calls arrived in
    assert flipping and len(flipping) < len(by_sample), by_sample
    results = read_table(home.lake, "results", run_id).to_pylist()
    flagged = {r["sample_id"] for r in results if "judge_flaky" in (r["flags"] or [])}
    assert flagged == flipping
    for r in results:  # the row is the asks' mean and majority
        own = [a for a in asks if a["sample_id"] == r["sample_id"]]
        faith = [
            a["score_100"]
            for a in own
            if a["metric"] == "judge_faithfulness" and a["score_100"] is not None
        ]
        if faith:
            assert r["judge_faithfulness"] == pytest.approx(1 + sum(faith) / len(faith) / 25)
        else:
            assert r["judge_faithfulness"] is None
        votes = [a["passed"] for a in own if a["metric"] == "passed" and a["passed"] is not None]
        # an answer that says nothing is not passed, by rule (no judge voted on it)
        assert r["passed"] == ((sum(votes) * 2 > len(votes)) if votes else False)
    rerun = {r["sample_id"]: r["judge_faithfulness"] for r in read_table(
        home.lake, "results", again).to_pylist()}  # fmt: skip
    assert rerun == {r["sample_id"]: r["judge_faithfulness"] for r in results}
    runs = read_table(home.lake, "runs", run_id).to_pylist()
    assert runs[-1]["judge_temperature"] == 1.0

    assert main(["ingest", "--home", str(home.home)]) == 0
    wh = Warehouse(home.warehouse)
    spread = wh.sql(
        "SELECT sample_id, spread_100, flaky FROM judge_repeat_spread "
        "WHERE run_id = $run AND metric = 'judge_faithfulness'",
        {"run": run_id},
    ).frame
    assert spread.height == CASES
    assert spread["spread_100"].max() > 0  # type: ignore[operator]
    assert set(spread.filter(spread["flaky"])["sample_id"]) == flipping
    reliability = judge_reliability(wh, run_id)
    row = reliability.filter(reliability["metric"] == "passed").row(0, named=True)
    assert row["judge"] == "openai:gpt-4o-mini"
    assert row["answers"] == CASES and row["asks"] == CASES * REPEATS
    assert row["flip_rate"] == pytest.approx(len(flipping) / CASES)


def test_iterations_ask_afresh_and_the_estimate_prices_the_repeats(
    home: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any, keys: None
) -> None:
    test_set = _test_set(tmp_path)
    with LoopbackLLM(responder=FlakyJudge()) as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.url)
        _run(home, test_set, "one", capsys, "--judge", "openai:gpt-4o-mini")
        one = llm.count
        run_id = _run(home, test_set, "two", capsys, "--judge", "openai:gpt-4o-mini",
                      "--iterations", "2", "--judge-temperature", "0.3")  # fmt: skip
        # iteration 1 asks at another temperature (a new key); iteration 2 afresh again
        assert _rubric_calls(llm, one, llm.count) == 2 * CASES
    asks = read_table(home.lake, "judge_asks", run_id).to_pylist()
    assert {a["iteration"] for a in asks} == {1, 2}
    assert {a["ask"] for a in asks} == {0}
    args = ["run", "--test-set", str(test_set), "--name", "e", "--home", str(home.home),
            "--judge", "openai:gpt-4o-mini", "--estimate"]  # fmt: skip
    assert main(args) == 0
    plain = capsys.readouterr().out
    assert "judge repeats" not in plain
    assert main([*args, "--judge-repeats", "3"]) == 0
    repeated = capsys.readouterr().out
    assert "each answer asked 3 time(s)" in repeated and "temperature 1" in repeated
    calls = [int(o.split("judge calls:")[1].split()[0].replace(",", "")) for o in (plain, repeated)]
    assert calls[1] == 3 * calls[0]


def test_a_jury_scores_by_mean_and_majority(
    home: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any, keys: None
) -> None:
    def by_model(provider: str, body: dict[str, Any]) -> Reply:
        # two judges pass every answer (5), the third fails it (2)
        return _reply(2 if body.get("model") == "claude-x" else 5)

    test_set = _test_set(tmp_path)
    with LoopbackLLM(responder=by_model) as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.url)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", llm.url)
        run_id = _run(home, test_set, "jury", capsys, "--judge", "openai:gpt-4o-mini",
                      "--judge", "openai:gpt-4o", "--judge", "anthropic:claude-x")  # fmt: skip
        assert {r.body.get("model") for r in llm.requests if r.body} == {
            "gpt-4o-mini",
            "gpt-4o",
            "claude-x",
        }
    results = read_table(home.lake, "results", run_id).to_pylist()
    # the answers that abstain have no rubric scores; every other answer is scored
    scored = [r for r in results if r["judge_faithfulness"] is not None]
    assert len(scored) >= CASES - 2
    for r in scored:
        assert r["judge_faithfulness"] == pytest.approx((5 + 5 + 2) / 3)
        assert r["passed"] is True  # two of three pass
        assert "jury_split" in r["flags"]
    assert main(["ingest", "--home", str(home.home)]) == 0
    agreement = jury_agreement(Warehouse(home.warehouse), run_id)
    passed = {
        r["judge"]: r
        for r in agreement.filter(agreement["metric"] == "passed").iter_rows(named=True)
    }
    # gpt-4o-mini agrees with gpt-4o and not with claude-x on every answer: 1 of 2 pairs
    assert passed["openai:gpt-4o-mini"]["agreement"] == pytest.approx(0.5)
    assert passed["anthropic:claude-x"]["agreement"] == pytest.approx(0.0)
    assert passed["anthropic:claude-x"]["mean_gap_100"] == pytest.approx(100.0)
    faith = agreement.filter(agreement["metric"] == "judge_faithfulness")
    gaps = dict(zip(faith["judge"], faith["mean_gap_100"], strict=True))
    # 5 against 2 on 1-5 is 75 points on 0-100; the two passing judges differ from each
    # other by nothing and from claude-x by 75: a mean gap of 37.5
    assert gaps == pytest.approx(
        {"anthropic:claude-x": 75.0, "openai:gpt-4o": 37.5, "openai:gpt-4o-mini": 37.5}
    )
    assert passed["openai:gpt-4o"]["answers"] == CASES


def test_a_judge_named_twice_is_one_clear_line(
    home: Paths, tmp_path: Path, capsys: Any, keys: None
) -> None:
    args = ["run", "--test-set", str(_test_set(tmp_path)), "--name", "x", "--home",
            str(home.home), "--judge", "openai:a", "--judge", "openai:a", "--estimate"]  # fmt: skip
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--judge" in err[0] and "once" in err[0]
