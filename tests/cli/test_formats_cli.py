"""Peer test sets run end to end through `evalhouse run` (local judge), `inspect`, `--map`,
null attribution in `domain_scores`, and `export` round trips."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.settings import Paths
from engine.testsets import load_test_set
from evalhouse.cli import main
from tests.loopback_llm import LoopbackLLM, Reply
from warehouse.queries import Warehouse

DATA = Path(__file__).resolve().parents[1] / "data" / "testsets"
PEERS = DATA / "peers"

# What the loopback target answers, by a word of the question (responses for goldens).
ANSWERS = {
    "warranty lasts": "The Acme warranty lasts two years.",
    "extend": "You can extend the Acme warranty by one year for $29.",
    "cost": "Acme Pro costs $49 per month, billed annually. See acme.com/pricing.",
    "trial": "Acme offers a 14-day free trial.",
    "based": "Acme is based in Lyon.",
    "founded": "Ada Park founded Acme.",
    "phone": "Call Acme support at 555-0100.",
    "hours": "Acme support is open 9am to 6pm on weekdays.",
    "password": "Click 'Forgot password' on the Acme login page.",
    "return": "Acme accepts returns within 30 days.",
}


def _answer(provider: str, body: dict[str, Any] | None) -> Reply:
    messages = (body or {}).get("messages", [])
    question = str(messages[-1].get("content", "")) if messages else ""
    for word, answer in ANSWERS.items():
        if word in question.lower().replace("how long is", "warranty lasts"):
            return Reply.text(answer)
    return Reply(status=400, raw_body=b'{"error": "unknown question"}')


@pytest.fixture(autouse=True)
def _keep_home_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALHOUSE_HOME", os.environ.get("EVALHOUSE_HOME", ""))


@pytest.fixture
def target(monkeypatch: pytest.MonkeyPatch) -> Iterator[LoopbackLLM]:
    with LoopbackLLM(responder=_answer) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        yield server


def _run(home: Paths, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["run", "--home", str(home.home), "--name", "peer", *args])
    out, err = capsys.readouterr()
    return code, out.strip().splitlines()[-1] if out.strip() else "", err


def _results(home: Paths, run_id: str) -> dict[str, dict[str, Any]]:
    frame = (
        Warehouse(home.warehouse)
        .sql("SELECT * FROM results WHERE run_id = $r ORDER BY sample_id", {"r": run_id})
        .frame
    )
    return {row["sample_id"]: row for row in frame.to_dicts()}


# file, needs a target, expected format, sample ids whose attribution is null
CASES = [
    ("ragas01_pandas.csv", False, "ragas01-csv", {"row-2"}),
    ("ragas01_ground_truths.jsonl", False, "ragas01-jsonl", {"row-1", "row-2"}),
    ("ragas02.json", False, "ragas-json", {"row-1", "row-2"}),
    ("deepeval_test_cases.csv", False, "deepeval-csv", {"row-1", "row-2"}),
    ("deepeval_goldens.json", True, "deepeval-json", {"row-1", "row-2"}),
    ("promptfoo/promptfooconfig.yaml", True, "promptfoo-yaml", set()),
    ("langfuse_items.jsonl", True, "langfuse-jsonl", {"lf-item-2"}),
    ("phoenix_examples.jsonl", True, "phoenix-jsonl", {"RGF0YXNldEV4YW1wbGU6Mg=="}),
    ("../answer_synthesis.json", False, "answer-synthesis-json", {"ql-1", "ql-2", "ql-3"}),
    ("../harness.csv", True, "harness-csv", {"row-1", "row-2", "row-3"}),
]


@pytest.mark.parametrize(("name", "needs_target", "fmt", "null_attribution"), CASES)
def test_peer_file_runs_end_to_end(
    home: Paths,
    capsys: pytest.CaptureFixture[str],
    target: LoopbackLLM,
    name: str,
    needs_target: bool,
    fmt: str,
    null_attribution: set[str],
) -> None:
    path = PEERS / name
    args = ["--test-set", str(path)] + (["--target", "openai:gpt-4o-mini"] if needs_target else [])
    if name.endswith("harness.csv"):
        ANSWERS["eu ai act"] = "The EU AI Act classifies AI systems into four risk tiers."
        ANSWERS["backpropagation"] = "Backpropagation computes gradients with the chain rule."
        ANSWERS["risk tiers"] = "Unacceptable, high, limited and minimal risk."
    code, run_id, err = _run(home, capsys, *args)
    assert code == 0, err
    assert f"test set: {fmt}, " in err
    rows = _results(home, run_id)
    assert set(rows) == {c.id for c in load_test_set(path).cases}
    for sample_id, row in rows.items():
        assert row["error"] is None, (sample_id, row["error"])
        assert row["accuracy"] is not None and 0 <= row["accuracy"] <= 100
        assert row["domain"], "domain is never empty"
        if sample_id in null_attribution:
            assert row["attribution"] is None and row["attribution_tier"] is None
        else:
            assert row["attribution"] is not None
    scores = (
        Warehouse(home.warehouse)
        .sql(
            "SELECT domain, attribution_mean, attribution_poor, query_count FROM domain_scores "
            "WHERE run_id = $r",
            {"r": run_id},
        )
        .frame
    )
    for row in scores.to_dicts():
        members = [r for r in rows.values() if r["domain"] == row["domain"]]
        scored = [r["attribution"] for r in members if r["attribution"] is not None]
        assert row["query_count"] == len(members)
        assert row["attribution_mean"] == (sum(scored) / len(scored) if scored else None)


def test_promptfoo_scores_and_claims_by_hand(
    home: Paths, capsys: pytest.CaptureFixture[str], target: LoopbackLLM
) -> None:
    path = PEERS / "promptfoo" / "promptfooconfig.yaml"
    code, run_id, err = _run(home, capsys, "--test-set", str(path), "--target", "openai:x")
    assert code == 0, err
    rows = _results(home, run_id)
    # "Acme Pro costs $49 ... See acme.com/pricing." cites a URL of acme.com: 100 points;
    # no brand names are given, so "Acme" alone counts for nothing.
    assert rows["test-1"]["attribution"] == 100.0
    assert rows["test-1"]["attribution_tier"] == "excellent"
    # "Acme offers a 14-day free trial." names neither the domain nor a brand: 0, poor.
    assert rows["test-2"]["attribution"] == 0.0
    assert rows["test-2"]["attribution_tier"] == "poor"
    # promptfoo tests carry no hand-written claims (`contains: $49` is kept in metadata);
    # since claims are derived from any reference, the factuality and similar
    # values become derived claims: completeness is scored and claim rows are written.
    claims = (
        Warehouse(home.warehouse)
        .sql(
            "SELECT sample_id, claims_source, claim_text FROM claims WHERE run_id = $r",
            {"r": run_id},
        )
        .frame.to_dicts()
    )
    assert {"test-1", "test-2"} <= {c["sample_id"] for c in claims}
    assert {c["claims_source"] for c in claims} == {"derived"}
    assert any("$49" in c["claim_text"] for c in claims if c["sample_id"] == "test-1")
    assert rows["test-1"]["completeness"] is not None
    assert rows["test-2"]["completeness"] is not None
    # the context-grounded case is judged for faithfulness by the local judge
    assert rows["test-1"]["judge_faithfulness"] is not None


def test_map_flag_and_config_section(
    home: Paths, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "mine.csv"
    path.write_text(
        "prompt_text,bot_reply,gold\n"
        '"Where is Acme based?","Acme is based in Lyon.","Acme is based in Lyon."\n',
        encoding="utf-8",
    )
    code, run_id, err = _run(
        home, capsys, "--test-set", str(path), "--map", "prompt_text=query",
        "--map", "bot_reply=response", "--map", "gold=reference",
    )  # fmt: skip
    assert code == 0, err
    assert "test set: columns-csv, 1 cases" in err
    config = json.loads(
        Warehouse(home.warehouse)
        .sql("SELECT config FROM runs WHERE run_id = $r", {"r": run_id})
        .frame["config"][0]
    )
    assert config["column_map"] == {
        "prompt_text": "query",
        "bot_reply": "response",
        "gold": "reference",
    }
    cfg = tmp_path / "run.yaml"
    cfg.write_text("map:\n  prompt_text: query\n  bot_reply: response\n  gold: reference\n")
    code, _, err = _run(home, capsys, "--test-set", str(path), "--config", str(cfg))
    assert code == 0, err


def test_map_of_an_absent_column_exits_2_with_one_line(
    home: Paths, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "mine.csv"
    path.write_text('prompt_text,bot_reply\n"Q","A"\n', encoding="utf-8")
    code, _, err = _run(home, capsys, "--test-set", str(path), "--map", "question=query")
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "column 'question' is not in the file" in lines[0]
    assert "Traceback" not in err and not home.lake.exists()
    code, _, err = _run(home, capsys, "--test-set", str(path), "--map", "question")
    assert code == 2 and "is not COLUMN=FIELD" in err


def test_inspect_prints_format_mapping_metrics_and_skipped_rows(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["inspect", str(PEERS / "langfuse_items.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "format:    langfuse-jsonl" in out
    assert "mapping:   none" in out
    assert "attribution        1     1  no brand names and domain 'langfuse_items'" in out
    assert f"{PEERS / 'langfuse_items.jsonl'}:3: archived dataset item; row skipped" in out
    path = tmp_path / "mine.csv"
    path.write_text('prompt_text,bot_reply\n"Q","A"\n', encoding="utf-8")
    assert main(["inspect", str(path), "--map", "prompt_text=query"]) == 0
    out = capsys.readouterr().out
    assert "mapping:   prompt_text=query" in out and "format:    columns-csv" in out
    assert "accuracy           0     1  no reference and no context" in out


# ------------------------------------------------------------------ export round trips


def _comparable(case: Any) -> tuple[Any, ...]:
    return (
        case.id,
        case.domain,
        case.query,
        case.response,
        case.expected_answer.text,
        tuple((c.text, c.importance) for c in case.expected_answer.claims),
        case.context,
        tuple(g.text for g in case.ground_truth),
    )


@pytest.mark.parametrize(
    ("fmt", "suffix"),
    [("jsonl", ".jsonl"), ("csv", ".csv"), ("ragas", ".jsonl"), ("ragas", ".csv"),
     ("deepeval", ".json"), ("promptfoo", ".yaml")],
)  # fmt: skip
def test_export_round_trip(
    home: Paths, capsys: pytest.CaptureFixture[str], tmp_path: Path, fmt: str, suffix: str
) -> None:
    source = DATA / "native.jsonl"  # acme-q03 has no response: an error row, allowed here
    code, run_id, err = _run(home, capsys, "--test-set", str(source), "--max-failed", "0.5")
    assert code == 0, err
    out = tmp_path / f"export{suffix}"
    code = main(["export", run_id, "--format", fmt, "--output", str(out), "--home", str(home.home)])
    assert code == 0
    original = load_test_set(source).cases
    back = load_test_set(out).cases
    expected = [_comparable(c) for c in original]
    got = [_comparable(c) for c in back]
    if fmt in ("ragas",):  # RAGAS has no claims field
        expected = [(*e[:5], (), *e[6:]) for e in expected]
    assert got == expected
    rows = _results(home, run_id)
    text = out.read_text(encoding="utf-8")
    assert str(rows["acme-q01"]["accuracy"]) in text  # the scores travel with the cases


def test_export_of_an_unknown_run_exits_2(home: Paths, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(home, capsys, "--test-set", str(DATA / "native.jsonl"), "--max-failed", "1")[0] == 0
    assert main(["export", "nope", "--format", "csv", "--home", str(home.home)]) == 2
    assert "run 'nope' is not in the warehouse" in capsys.readouterr().err
