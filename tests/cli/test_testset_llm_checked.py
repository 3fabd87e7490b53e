"""``testset from-pages`` with an LLM writer (the loopback server speaking OpenAI's wire
format): every written answer is checked against its passages with the claim verifier, and
a case whose answer states what the passages do not support is dropped and reported;
``--instructions`` reaches the prompt."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from engine.settings import Paths
from evalhouse.cli import main
from tests.loopback_llm import LoopbackLLM, Reply, loopback_llm  # noqa: F401  (fixture)

PAGES = Path(__file__).resolve().parents[1] / "data" / "pages" / "site"
WRONG = "The Enterprise plan costs $99 per user per month."


def _block(prompt: str, title: str) -> str:
    found = re.search(title + r"[^\n]*:\n<<<\n(.*?)\n>>>", prompt, re.DOTALL)
    assert found, prompt
    return found.group(1)


def _writer(provider: str, body: dict[str, Any]) -> Reply:
    """Words each case from its facts, except that every case about the Solo plan gets an
    answer about another plan (what the verifier must catch)."""
    prompt = "\n".join(str(m["content"]) for m in body["messages"])
    facts = [line.removeprefix("- ") for line in _block(prompt, "FACTS").splitlines()]
    draft = prompt.split("keep what it asks):\n", 1)[1].split("\n", 1)[0]
    if "STYLE: out-of-scope" in prompt:
        answer = "The sources do not say."
    elif "Solo plan" in draft and "STYLE: simple" in prompt:
        answer = WRONG
    else:
        answer = " ".join(facts)
    return Reply.json({"question": "Written: " + draft, "answer": answer})


@pytest.fixture
def openai_here(loopback_llm: LoopbackLLM, monkeypatch: pytest.MonkeyPatch) -> LoopbackLLM:  # noqa: F811
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", loopback_llm.url)
    loopback_llm.responder = _writer
    return loopback_llm


def test_cases_the_passages_do_not_support_are_dropped_and_reported(
    home: Paths, tmp_path: Path, openai_here: LoopbackLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "g.jsonl"
    args = ["testset", "from-pages", str(PAGES), "--home", str(home.home), "--count", "12",
            "--styles", "simple,reasoning,out-of-scope", "--judge", "openai:gpt-4o-mini",
            "--instructions", "Ask as a small-business owner comparing plans.",
            "--output", str(out)]  # fmt: skip
    assert main(args) == 0
    report = capsys.readouterr().err
    cases = [json.loads(line) for line in out.read_text().splitlines()]
    solo = [r for r in openai_here.requests if "Solo plan" in r.prompt_text.split("reference")[-1]]
    assert solo, "no draft asked about the Solo plan"
    dropped = [line for line in report.splitlines() if line.startswith("dropped: ")]
    assert len(dropped) == 1 and WRONG in dropped[0] and "Solo plan" in dropped[0]
    # the passage prices another plan at $14 and this one at $8: contradicted or not stated
    reason = "contradicted by" if "contradicted by" in dropped[0] else "not in"
    assert dropped[0].endswith(f"is {reason} the passages")
    assert f"answers the passages do not support, dropped: 1 (1 {reason} the passages)" in report
    assert all(WRONG not in c["expected_answer"]["text"] for c in cases)
    assert len(cases) == openai_here.count - 1  # every other written case is kept
    assert all(c["query"].startswith("Written: ") for c in cases)
    assert all(
        "Ask as a small-business owner comparing plans." in r.prompt_text
        for r in openai_here.requests
    )


def test_without_instructions_the_prompt_asks_for_nothing_more(
    home: Paths, tmp_path: Path, openai_here: LoopbackLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "g.jsonl"
    assert main(["testset", "from-pages", str(PAGES), "--home", str(home.home), "--count", "2",
                 "--styles", "reasoning", "--judge", "openai:gpt-4o-mini",
                 "--output", str(out)]) == 0  # fmt: skip
    assert openai_here.count == 2
    assert not any("ASKS FOR" in r.prompt_text for r in openai_here.requests)
    assert "answers checked against the passages: none dropped" in capsys.readouterr().err
    assert len(out.read_text().splitlines()) == 2


def test_instructions_without_an_llm_is_one_line_exit_2(
    home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "g.jsonl"
    assert main(["testset", "from-pages", str(PAGES), "--home", str(home.home),
                 "--instructions", "short questions", "--output", str(out)]) == 2  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--instructions" in err[0] and "--judge" in err[0]
    assert not out.exists()
