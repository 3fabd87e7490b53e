"""Judge drift through the real commands: a series scored by one loopback judge, then by a
judge that grades one point harsher. The run with the new judge checks drift on its own and
recovers the injected shift within its interval; an unchanged judge shows none."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from engine.demo import build_weekly_test_sets
from engine.drift import choose_anchors, frozen_anchors, split_delta
from engine.lake import list_parts, read_table
from engine.settings import Paths
from evalhouse.cli import main
from tests.loopback_llm import LoopbackLLM, Reply
from warehouse.drift_queries import judge_changes, judge_drift_split
from warehouse.queries import Warehouse

HARSH = "judge-harsh"
"""The model name the loopback server grades one point harsher."""


def _grader(provider: str, body: dict[str, Any]) -> Reply:
    """Scores 3 or 4 by the answer; the harsh model one point lower, give or take one point
    of noise that averages out (so the interval has a width to check)."""
    prompt = json.dumps(body.get("messages", []))
    answer = prompt.split("ANSWER")[-1]
    digest = hashlib.sha256(answer.encode()).digest()
    score = 3 + digest[0] % 2
    if body.get("model") == HARSH:
        score = score - 1 + (digest[1] % 3 - 1)
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


def _test_set(tmp_path: Path, n: int) -> Path:
    _name, test_set, _date = build_weekly_test_sets(tmp_path / "sets", weeks=1)[0]
    small = tmp_path / "small.jsonl"
    small.write_text("".join(test_set.read_text().splitlines(keepends=True)[:n]))
    return small


def _run(home: Paths, test_set: Path, judge: str, capsys: pytest.CaptureFixture[str]) -> str:
    args = ["run", "--test-set", str(test_set), "--name", "nightly", "--judge", judge,
            "--home", str(home.home)]  # fmt: skip
    assert main(args) == 0
    return capsys.readouterr().out.strip().splitlines()[-1]


@pytest.fixture
def judge_server(monkeypatch: pytest.MonkeyPatch) -> Any:
    with LoopbackLLM(responder=_grader) as llm:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("OPENAI_BASE_URL", llm.url)
        yield llm


def _drift(home: Paths, run_id: str) -> dict[str, dict[str, Any]]:
    rows = [
        r
        for p in list_parts(home.lake, ["judge_drift"])
        for r in read_table(home.lake, "judge_drift", p.run_id, 0).to_pylist()
        if r["run_id"] == run_id
    ]
    return {str(r["metric"]): r for r in rows}


def test_a_harsher_judge_is_measured_as_drift(
    home: Paths, tmp_path: Path, judge_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    test_set = _test_set(tmp_path, 30)
    old = _run(home, test_set, "openai:judge-mild", capsys)
    new = _run(home, test_set, f"openai:{HARSH}", capsys)
    drift = _drift(home, new)
    for metric in ("judge_faithfulness", "judge_completeness"):
        row = drift[metric]
        assert row["baseline_run_id"] == old and row["n"] >= 20  # the demo set has bad rows
        assert row["ci_low"] <= -25.0 <= row["ci_high"], row  # one point of 1-5 is 25 of 0-100
        assert row["ci_high"] < 0
        assert row["old_judge"].startswith("openai:judge-mild@")
    anchors = frozen_anchors(home.lake, "nightly")
    assert anchors is not None and anchors.run_id == old and len(anchors.sample_ids) >= 20
    wh = Warehouse(home.warehouse)
    changes = judge_changes(wh)
    assert list(changes["run_id"]) == [new]
    split = judge_drift_split(wh, new, old).filter(metric="judge_faithfulness").row(0, named=True)
    # Same answers, so what the judge moved is all of the observed change.
    system, low, high = split_delta(
        split["observed_delta"], split["mean_shift"], split["ci_low"], split["ci_high"]
    )
    assert abs(system) < 1e-9 and low is not None and high is not None and low <= 0 <= high


def test_the_same_judge_shows_no_drift_and_the_anchors_stay_frozen(
    home: Paths, tmp_path: Path, judge_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    test_set = _test_set(tmp_path, 12)
    first = _run(home, test_set, "openai:judge-mild", capsys)
    assert not _drift(home, first)  # the first run of a series has no baseline
    code = main(["drift", "--series", "nightly", "--judge", "openai:judge-mild",
                 "--home", str(home.home)])  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert "judge_faithfulness" in out and "+0.0" in out
    rows = [
        r
        for p in list_parts(home.lake, ["judge_drift"])
        for r in read_table(home.lake, "judge_drift", p.run_id, 0).to_pylist()
    ]
    assert rows and all(r["ci_low"] <= 0 <= r["ci_high"] for r in rows)
    before = frozen_anchors(home.lake, "nightly")
    _run(home, test_set, "openai:judge-mild", capsys)
    assert main(["drift", "--series", "nightly", "--judge", f"openai:{HARSH}",
                 "--home", str(home.home)]) == 0  # fmt: skip
    assert frozen_anchors(home.lake, "nightly") == before


def test_anchors_are_drawn_evenly_across_domains_and_deterministically() -> None:
    domains = {f"a{i}": "big.com" for i in range(100)} | {"s1": "small.com", "s2": "small.com"}
    chosen = choose_anchors(domains, "nightly", limit=10)
    assert len(chosen) == 10 and {"s1", "s2"} <= set(chosen)
    assert chosen == choose_anchors(dict(reversed(domains.items())), "nightly", limit=10)
    assert choose_anchors(domains, "other", limit=10) != chosen
