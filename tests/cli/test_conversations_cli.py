"""Conversation test sets end to end through `evalhouse run`: the write-up's multi-turn CSV
and its JSON form, graded by the local judge and by an LLM judge over loopback HTTP, the
target answering with the history, kill -9 mid-conversation and resume, bad files refused.

Expected values are worked out by hand from the fixture text (tests/data/conversations/
three.csv) and the documented rules (engine/scoring/conversation.py), not read back from
a run.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.settings import Paths, resolve_paths
from evalhouse.cli import main
from tests.loopback_llm import LoopbackLLM, Reply
from warehouse.queries import Warehouse

DATA = Path(__file__).resolve().parents[1] / "data" / "conversations"
THREE = DATA / "three.csv"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _keep_home_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALHOUSE_HOME", os.environ.get("EVALHOUSE_HOME", ""))


def _run(home: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["run", "--home", str(home), *args])
    out, err = capsys.readouterr()
    return code, out.strip().splitlines()[-1] if out.strip() else "", err


def _rows(home: Path, sql: str, run_id: str) -> list[dict[str, Any]]:
    return Warehouse(resolve_paths(home).warehouse).sql(sql, {"r": run_id}).frame.to_dicts()


def _turns(home: Path, run_id: str) -> dict[tuple[str, int], dict[str, Any]]:
    rows = _rows(home, "SELECT * FROM turns WHERE run_id = $r", run_id)
    return {(r["sample_id"], r["turn"]): r for r in rows}


def _scores(home: Path, run_id: str) -> dict[str, dict[str, Any]]:
    rows = _rows(home, "SELECT * FROM conversation_scores WHERE run_id = $r", run_id)
    return {r["sample_id"]: r for r in rows}


# ----------------------------------------------------------------------------- local judge


def test_three_conversations_local_judge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, run_id, err = _run(tmp_path, capsys, "--test-set", str(THREE), "--name", "convs")
    assert code == 0, err
    assert "test set: conversations-csv, 3 cases" in err
    turns = _turns(tmp_path, run_id)
    # one row per turn of every conversation: 6 + 4 + 2
    assert sorted(turns) == [("hours", 1), ("hours", 2)] + [
        ("password", n) for n in range(1, 5)
    ] + [("shipment", n) for n in range(1, 7)]
    assert turns[("shipment", 1)]["role"] == "user"
    assert turns[("shipment", 1)]["relevant"] is None  # user turns are not graded
    # recorded replies are used as they are
    assert turns[("shipment", 4)]["content"] == "Could you tell me your order number?"
    assert not turns[("shipment", 4)]["generated"]
    # knowledge attrition: turn 4 asks for the order number turn 1 gave ("#12345")
    assert [k for k, r in turns.items() if r["attrition"]] == [("shipment", 4)]
    assert "order number given at turn 1" in turns[("shipment", 4)]["reason"]
    # role: "As an AI language model" breaks the bank assistant's role; hours has no role
    assert turns[("password", 2)]["in_role"] is False
    assert turns[("password", 4)]["in_role"] is True
    assert turns[("hours", 2)]["in_role"] is None
    # an unrelated reply: neither relevant nor meeting its expectation
    assert turns[("hours", 2)]["relevant"] is False
    assert turns[("hours", 2)]["expectation_passed"] is False
    # the window (5 turns) reaches back to turn 1 in these short conversations
    assert turns[("shipment", 6)]["window_start"] == 1
    scores = _scores(tmp_path, run_id)
    assert set(scores) == {"shipment", "password", "hours"}
    assert scores["shipment"]["knowledge_retention"] == pytest.approx(2 / 3)
    assert scores["shipment"]["assistant_turns"] == 3
    assert scores["password"]["role_adherence"] == pytest.approx(1 / 2)
    assert scores["password"]["knowledge_retention"] == 1.0
    assert scores["hours"]["role_adherence"] is None
    assert scores["hours"]["relevancy"] == 0.0
    assert scores["hours"]["completeness"] == 0.0  # its one user message is never answered
    assert {s["judge"] for s in scores.values()} == {"local"}
    results = _rows(tmp_path, "SELECT sample_id, response, error FROM results WHERE run_id = $r",
                    run_id)  # fmt: skip
    assert len(results) == 3 and all(r["error"] is None for r in results)
    hours = next(r for r in results if r["sample_id"] == "hours")
    assert hours["response"] == (
        "user: What time do you open on Saturday?\n\nassistant: Bananas are rich in potassium."
    )


# ----------------------------------------------------------------------------- LLM over HTTP

TARGET_REPLIES = {
    "Hi, my order #12345 hasn't arrived yet": "Sorry! Let me check order #12345.",
    "It's been 2 weeks since I ordered": "What is your order number?",
    "Can I get a refund instead?": "Yes, a full refund within 30 days.",
    "I forgot my password and cannot log in": "I am an AI, I cannot help.",
    "Where do I find the reset link?": "Click Forgot password on the login page.",
    "What time do you open on Saturday?": "We open at 9am on Saturday.",
}


def _judge_turn(prompt: str) -> dict[str, Any]:
    """The scripted judge: reads the reply and its window out of the prompt."""
    reply = prompt.split("ASSISTANT REPLY TO GRADE", 1)[1].split("<<<", 1)[1].split(">>>", 1)[0]
    window = prompt.split("RECENT TURNS", 1)[1].split("<<<", 1)[1].split(">>>", 1)[0]
    numbers = [int(n) for n in re.findall(r"^\[(\d+)\]", window.strip(), re.MULTILINE)]
    return {
        "reason": f"window {numbers}",
        "expectation_score": 0.2 if "?" in reply else 0.9,
        "relevant": "AI" not in reply,
        "in_role": "AI" not in reply,
    }


def _llm(provider: str, body: dict[str, Any] | None) -> Reply:
    messages = (body or {}).get("messages", [])
    system = str(messages[0]["content"]) if messages else ""
    if "judge of chatbot conversations" in system:
        prompt = str(messages[-1]["content"])
        if "ASSISTANT REPLY TO GRADE" in prompt:
            return Reply.json(_judge_turn(prompt))
        if "knowledge attrition" in system:
            turns = [4] if "What is your order number?" in prompt else []
            return Reply.json({"reason": "asked again", "attrition_turns": turns})
        satisfied = "9am" in prompt or "refund within" in prompt
        return Reply.json(
            {"reason": "r", "intents": [{"intent": "get help", "satisfied": satisfied},
                                        {"intent": "be polite", "satisfied": True}]}
        )  # fmt: skip
    last = str(messages[-1]["content"]) if messages else ""
    # A candidate's user template (below) wraps the customer's words.
    reply = TARGET_REPLIES[last.removeprefix("Customer says: ")]
    return Reply.text(reply, input_tokens=10 * len(messages), output_tokens=5)


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[LoopbackLLM]:
    with LoopbackLLM(responder=_llm) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        yield server


def test_target_and_judge_over_http(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], llm: LoopbackLLM
) -> None:
    code, run_id, err = _run(
        tmp_path, capsys, "--test-set", str(THREE), "--name", "llm", "--target",
        "openai:gpt-4o-mini", "--judge", "openai:gpt-4o-mini", "--option",
        "conversation_window=2",
    )  # fmt: skip
    assert code == 0, err
    target_calls = [r for r in llm.requests if "judge of chatbot" not in r.prompt_text]
    assert len(target_calls) == 6  # one per assistant turn
    # the target sees the system prompt, the chatbot role and the history so far
    sixth = next(r for r in target_calls if r.body and r.body["messages"][-1]["content"]
                 == "Can I get a refund instead?")  # fmt: skip
    roles = [m["role"] for m in sixth.body["messages"]]  # type: ignore[index]
    assert roles == ["system", "system", "user", "assistant", "user", "assistant", "user"]
    assert sixth.body["messages"][1]["content"].startswith("You are a helpful customer support")  # type: ignore[index]
    # ...with its own generated replies, not the recorded ones
    assert sixth.body["messages"][5]["content"] == "What is your order number?"  # type: ignore[index]
    judge_calls = [r for r in llm.requests if "judge of chatbot" in r.prompt_text]
    assert len(judge_calls) == 6 + 2 * 3
    # the estimate counts the calls the run made
    capsys.readouterr()
    assert main(["run", "--home", str(tmp_path), "--test-set", str(THREE), "--name", "llm",
                 "--target", "openai:gpt-4o-mini", "--judge", "openai:gpt-4o-mini",
                 "--estimate"]) == 0  # fmt: skip
    estimate = capsys.readouterr().out
    assert "target calls:  6\n" in estimate and "judge calls:   12\n" in estimate
    turns = _turns(tmp_path, run_id)
    assert turns[("shipment", 4)]["content"] == "What is your order number?"
    assert turns[("shipment", 4)]["generated"] is True
    # window of 2: turn 4 sees turns 2-3, turn 6 sees 4-5, turn 2 sees turn 1
    assert turns[("shipment", 4)]["window_start"] == 2
    assert turns[("shipment", 4)]["reason"] == "window [2, 3]; knowledge attrition: asked again"
    assert turns[("shipment", 6)]["reason"] == "window [4, 5]"
    assert turns[("shipment", 2)]["reason"] == "window [1]"
    # scripted: a reply with "?" scores 0.2 (fails), others 0.9
    assert turns[("shipment", 4)]["expectation_score"] == pytest.approx(0.2)
    assert turns[("shipment", 4)]["expectation_passed"] is False
    assert turns[("shipment", 6)]["expectation_passed"] is True
    assert turns[("shipment", 4)]["attrition"] is True
    assert turns[("shipment", 4)]["input_tokens"] == 10 * 5  # system, role, user, asst, user
    scores = _scores(tmp_path, run_id)
    shipment, password, hours = scores["shipment"], scores["password"], scores["hours"]
    assert shipment["expectation_mean"] == pytest.approx((0.9 + 0.2 + 0.9) / 3)
    assert shipment["expectation_pass_rate"] == pytest.approx(2 / 3)
    assert shipment["knowledge_retention"] == pytest.approx(2 / 3)
    assert shipment["relevancy"] == 1.0 and shipment["role_adherence"] == 1.0
    assert shipment["completeness"] == 1.0  # "refund within" is in its transcript
    assert password["relevancy"] == 0.5 and password["role_adherence"] == 0.5
    assert password["completeness"] == 0.5
    assert hours["completeness"] == 1.0 and hours["role_adherence"] is None
    assert shipment["window_size"] == 2 and shipment["judge"] == "openai:gpt-4o-mini"
    cost = _rows(tmp_path, "SELECT sum(input_tokens) AS t FROM results WHERE run_id = $r", run_id)
    # target tokens of every reply, summed per conversation: 10 x messages sent (hours has
    # no chatbot role, so no second system message)
    assert cost[0]["t"] == 10 * ((3 + 5 + 7) + (3 + 5) + 2)
    # CI gates on the conversation means: completeness (1 + 0.5 + 1) / 3, role adherence
    # (1 + 0.5) / 2 (hours has no chatbot role)
    gate = ["check", run_id, "--home", str(tmp_path)]
    capsys.readouterr()
    assert main([*gate, "--min", "conversation:completeness=0.83",
                 "--max", "conversation:completeness=0.84",
                 "--min", "conversation:role_adherence=0.75"]) == 0  # fmt: skip
    assert main([*gate, "--min", "conversation:role_adherence=0.76"]) == 1
    assert "conversation:role_adherence" in capsys.readouterr().out


ACME = """---
name: Acme support
model: gpt-4o-mini
user_template: "Customer says: {{input}}"
---
You answer for Acme in one sentence.
"""


def test_a_candidate_answers_each_turn_with_the_history(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], llm: LoopbackLLM
) -> None:
    project = tmp_path / "project"
    (project / "candidates" / "acme").mkdir(parents=True)
    (project / "candidates" / "acme" / "base.md").write_text(ACME, encoding="utf-8")
    (project / "graders").mkdir()
    (project / "graders" / "no-ai.yaml").write_text(
        "type: regex\noptions: {pattern: 'an AI', must_match: false}\n", encoding="utf-8"
    )
    code, run_id, err = _run(
        tmp_path / "home", capsys, "--test-set", str(THREE), "--name", "cand", "--project",
        str(project), "--candidates", "acme", "--graders", "no-ai", "--judge", "openai:gpt-4o-mini",
    )  # fmt: skip
    assert code == 0, err
    target_calls = [r for r in llm.requests if "judge of chatbot" not in r.prompt_text]
    assert len(target_calls) == 6  # one per assistant turn
    sixth = next(
        r.body["messages"]
        for r in target_calls
        if r.body
        and r.body["messages"][-1]["content"] == "Customer says: Can I get a refund instead?"
    )
    # the candidate's system prompt, the chatbot role, then the history with the replies the
    # candidate gave; earlier user turns as they were said, the new one through the template
    assert [m["role"] for m in sixth] == [
        "system", "system", "user", "assistant", "user", "assistant", "user",
    ]  # fmt: skip
    assert sixth[0]["content"] == "You answer for Acme in one sentence."
    assert sixth[1]["content"].startswith("You are a helpful customer support")
    assert sixth[2]["content"] == "Hi, my order #12345 hasn't arrived yet"
    assert sixth[3]["content"] == "Sorry! Let me check order #12345."
    assert sixth[5]["content"] == "What is your order number?"
    turns = _turns(tmp_path / "home", run_id)
    assert {(sid, t) for sid, t in turns} >= {("shipment", 4), ("shipment", 6)}
    assert all(row["candidate"] == "acme" for row in turns.values())
    assert turns[("shipment", 6)]["content"] == "Yes, a full refund within 30 days."


def test_jsonl_form(tmp_path: Path, capsys: pytest.CaptureFixture[str], llm: LoopbackLLM) -> None:
    path = tmp_path / "support.jsonl"
    conv = {
        "scenario": "Customer support — delayed shipment",
        "chatbot_role": "You are a helpful customer support agent for an e-commerce company",
        "turns": [
            {"role": "user", "content": "Hi, my order #12345 hasn't arrived yet"},
            {"role": "assistant", "expected": "Acknowledge order number, ask what the issue is"},
            {"role": "user", "content": "It's been 2 weeks since I ordered"},
            {"role": "assistant", "expected": "Look up shipping status, provide tracking info"},
        ],
    }
    path.write_text(json.dumps({"id": "delayed", **conv}) + "\n", encoding="utf-8")
    code, run_id, err = _run(
        tmp_path / "home", capsys, "--test-set", str(path), "--name", "jsonl", "--target",
        "openai:gpt-4o-mini",
    )  # fmt: skip
    assert code == 0, err
    assert "conversations-jsonl" in err
    turns = _turns(tmp_path / "home", run_id)
    assert [turns[("delayed", n)]["content"] for n in (2, 4)] == [
        "Sorry! Let me check order #12345.",
        "What is your order number?",
    ]
    assert turns[("delayed", 4)]["expected"] == "Look up shipping status, provide tracking info"
    assert turns[("delayed", 4)]["attrition"] is True  # local rule: #12345 was given at turn 1
    (score,) = _scores(tmp_path / "home", run_id).values()
    assert score["knowledge_retention"] == 0.5


def test_recorded_target_needs_recorded_replies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "empty.csv"
    path.write_text(
        "conversation_id,turn,role,content,expected_output\n"
        "c,1,user,Hello,\nc,2,assistant,,Greet back\n",
        encoding="utf-8",
    )
    code, run_id, _ = _run(tmp_path / "home", capsys, "--test-set", str(path), "--name", "e")
    assert code == 1  # an error row
    (row,) = _rows(tmp_path / "home", "SELECT error FROM results WHERE run_id = $r", run_id)
    assert "turn 2 has no recorded reply" in row["error"]
    assert _turns(tmp_path / "home", run_id) == {}


# ----------------------------------------------------------------------------- bad files

HEADER = "conversation_id,turn,role,content,expected_output\n"


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        (
            "conversation_id,turn,content,expected_output\nc,1,Hi,\n",
            1,
            "missing column(s) role",
        ),
        (HEADER + "c,1,user,Hi,\nc,2,assistant,Hello,\nc,4,user,Bye,\n", 4,
         "conversation 'c': turn 3 is missing (turn 4 follows turn 2)"),
        (HEADER + "c,1,user,Hi,\nc,2,robot,beep,\n", 3,
         "role 'robot' is not one of user, assistant"),
    ],
)  # fmt: skip
def test_bad_csv_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, line: int, reason: str
) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(text, encoding="utf-8")
    home = tmp_path / "home"
    capsys.readouterr()
    code = main(["run", "--home", str(home), "--test-set", str(path), "--name", "bad"])
    out, err = capsys.readouterr()
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert f"{path}:{line}: {reason}" in lines[0] or f"{path}: line {line}: {reason}" in lines[0]
    assert "Traceback" not in err and out == ""
    assert not home.exists()  # nothing half-written


# ----------------------------------------------------------------------------- kill -9


class _Gate:
    """Blocks the target's answer to one user message until released."""

    def __init__(self, message: str) -> None:
        self.message = message
        self.reached = threading.Event()
        self.release = threading.Event()
        self.asked: Counter[str] = Counter()

    def __call__(self, provider: str, body: dict[str, Any] | None) -> Reply:
        last = str((body or {}).get("messages", [{}])[-1].get("content", ""))
        self.asked[last] += 1
        if last == self.message and not self.release.is_set():
            self.reached.set()
            self.release.wait(60)
        return Reply.text(TARGET_REPLIES[last])


@pytest.mark.slow
def test_kill_mid_conversation_and_resume(tmp_path: Path) -> None:
    gate = _Gate("Can I get a refund instead?")  # shipment's third assistant turn
    home = tmp_path / "home"
    with LoopbackLLM(responder=gate) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "sk-test",
               "EVALHOUSE_HOME": str(home)}  # fmt: skip
        command = [sys.executable, "-c", "from evalhouse.cli import main; raise SystemExit(main())",
                   "run", "--test-set", str(THREE), "--name", "killed", "--target",
                   "openai:gpt-4o-mini", "--concurrency", "1"]  # fmt: skip
        first = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)  # fmt: skip
        try:
            assert gate.reached.wait(120), "the run never reached the third turn"
            first.send_signal(signal.SIGKILL)
            first.wait(30)
        finally:
            if first.poll() is None:
                first.kill()
        gate.release.set()
        # turns 2 and 4 of the shipment conversation were answered before the kill
        assert gate.asked["Hi, my order #12345 hasn't arrived yet"] == 1
        assert gate.asked["It's been 2 weeks since I ordered"] == 1
        time.sleep(0.2)
        second = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                                timeout=300)  # fmt: skip
    assert second.returncode == 0, second.stderr
    assert "resuming run" in second.stderr
    # resumed per turn: only the turn in flight at the kill was asked again
    assert gate.asked["Hi, my order #12345 hasn't arrived yet"] == 1
    assert gate.asked["It's been 2 weeks since I ordered"] == 1
    assert gate.asked["Can I get a refund instead?"] == 2
    assert all(gate.asked[m] == 1 for m in TARGET_REPLIES if "refund" not in m)
    run_id = second.stdout.strip().splitlines()[-1]
    wh = Warehouse(Paths(home).warehouse)
    counts = wh.sql(
        "SELECT sample_id, turn, count(*) AS n FROM turns WHERE run_id = $r GROUP BY ALL",
        {"r": run_id},
    ).frame.to_dicts()
    assert len(counts) == 12 and {c["n"] for c in counts} == {1}  # exactly one row per turn
    convs = wh.sql(
        "SELECT sample_id, count(*) AS n FROM conversation_scores WHERE run_id = $r GROUP BY ALL",
        {"r": run_id},
    ).frame.to_dicts()
    assert sorted((c["sample_id"], c["n"]) for c in convs) == [
        ("hours", 1), ("password", 1), ("shipment", 1)
    ]  # fmt: skip
    replies = (
        wh.sql(
            "SELECT content FROM turns WHERE run_id = $r AND sample_id = 'shipment' "
            "AND role = 'assistant' ORDER BY turn",
            {"r": run_id},
        )
        .frame["content"]
        .to_list()
    )
    assert replies == [
        "Sorry! Let me check order #12345.",
        "What is your order number?",
        "Yes, a full refund within 30 days.",
    ]


def test_inspect_a_conversation_file(capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["inspect", str(THREE)]) == 0
    out = capsys.readouterr().out
    assert "conversations: 3, 12 turns, 6 assistant turns" in out
    assert "replies:       6 recorded (used with --target recorded), 0 empty" in out
    assert "chatbot roles: 2 of 3 conversations" in out
    assert "  hours: 2 turns - Store hours" in out
