"""``evalhouse candidates vary``: real files, the real loader, the CLI's exit codes, and
the LLM-worded path against the loopback server (never a real network)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.candidates import load_candidates
from engine.candidates.edits import apply_edit, available_edits, instruction_units, plan_edits
from engine.candidates.vary import VaryError, variant_id, vary
from evalhouse.cli import main
from tests.loopback_llm import LoopbackLLM, Reply

BASE = """---
name: Helper
model: loopback-chat
user_template: "Question: {{input}}"
recommended_graders: exact:1
---
You are a careful assistant. Answer from the context only.

Rules:
- Be precise.
- Never guess.

Context: {{context}}
"""


def project(root: Path) -> Path:
    """A project with family ``helper`` (base.md); returns the base file."""
    family = root / "candidates" / "helper"
    family.mkdir(parents=True)
    base = family / "base.md"
    base.write_text(BASE, encoding="utf-8")
    return base


@pytest.fixture(autouse=True)
def _keep_home_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALHOUSE_HOME", os.environ.get("EVALHOUSE_HOME", ""))


def test_units_and_edits_read_the_prompt_as_a_person_would() -> None:
    body = BASE.split("---\n", 2)[2].strip()
    assert instruction_units(body) == [
        "You are a careful assistant.",
        "Answer from the context only.",
        "Be precise.",
        "Never guess.",
        "Context: {{context}}",
    ]
    dropped = apply_edit(body, {"kind": "ablate", "index": 3, "removed": "Never guess."})
    assert "Never guess" not in dropped and "- Be precise." in dropped
    assert "\n\n\n" not in dropped
    turned = apply_edit(body, {"kind": "reorder", "order": [1, 0, 2, 3, 4]})
    assert turned.startswith("Answer from the context only. You are a careful assistant.")
    # 5 ablations + 5 constraints + 5! - 1 orders
    assert available_edits(body) == 5 + 5 + 119
    with pytest.raises(ValueError, match="allows 129"):
        plan_edits(body, 130, seed=0)


def test_vary_is_deterministic_and_idempotent(tmp_path: Path) -> None:
    first, second = project(tmp_path / "a"), project(tmp_path / "b")
    one = vary(first, 6, seed=7)
    two = vary(second, 6, seed=7)
    assert [v.id for v in one.written] == [v.id for v in two.written]
    assert [v.path.read_bytes() for v in one.written] == [v.path.read_bytes() for v in two.written]
    again = vary(first, 6, seed=7)
    assert again.written == [] and [v.id for v in again.existing] == [v.id for v in one.written]
    assert len(list(first.parent.glob("*.md"))) == 7
    other = vary(first, 6, seed=8)
    assert {v.id for v in other.written}.isdisjoint(v.id for v in one.written)
    for variant in one.written:
        assert variant.id == variant_id("helper", variant.edit)


def test_every_edit_kind_gives_a_candidate_the_loader_accepts(tmp_path: Path) -> None:
    base = project(tmp_path)
    report = vary(base, 40, seed=3)
    kinds = {v.edit["kind"] for v in report.written}
    assert kinds == {"ablate", "reorder", "tone", "format"}
    loaded = {c.id: c for c in load_candidates(tmp_path / "candidates")}
    assert len(loaded) == 41
    for variant in report.written:
        candidate = loaded[variant.id]
        assert candidate.parent == "helper"
        assert json.loads(candidate.edit) == variant.edit
        assert candidate.system_prompt == variant.body
        assert candidate.user_template == "Question: {{input}}"
        assert candidate.grader_weights() == {"exact": 1.0}
    # a variant of a variant records its own parent, next to it
    child = vary(Path(loaded[report.written[0].id].source), 1, seed=0).written[0]
    reloaded = {c.id: c for c in load_candidates(tmp_path / "candidates")}
    assert reloaded[child.id].parent == report.written[0].id


def _vary_cli(*args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["candidates", "vary", *args])
    return code, capsys.readouterr().err.strip()


def test_refusals_are_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = project(tmp_path)
    code, err = _vary_cli(str(tmp_path / "nope.md"), "--count", "2", capsys=capsys)
    assert code == 2 and "no such candidate file" in err and "\n" not in err
    bad = base.parent / "bad.md"
    bad.write_text("no front matter\n", encoding="utf-8")
    code, err = _vary_cli(str(bad), "--count", "2", capsys=capsys)
    assert code == 2 and "not a valid candidate file" in err and "\n" not in err
    for count in ("0", "1001"):
        code, err = _vary_cli(str(base), "--count", count, capsys=capsys)
        assert code == 2 and "use 1 to 1000" in err and "\n" not in err
    code, err = _vary_cli(str(base), "--count", "500", capsys=capsys)
    assert code == 2 and "allows 129 distinct variants" in err
    with pytest.raises(VaryError):
        vary(base, 0)
    assert sorted(p.name for p in base.parent.iterdir()) == ["bad.md", "base.md"]


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes anywhere")
def test_a_folder_that_cannot_be_written_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = project(tmp_path)
    base.parent.chmod(0o500)
    try:
        code, err = _vary_cli(str(base), "--count", "2", capsys=capsys)
    finally:
        base.parent.chmod(0o700)
    assert code == 2 and "is not writable" in err and "\n" not in err


def _reword(provider: str, body: dict[str, Any]) -> Reply:
    user = body["messages"][-1]["content"]
    draft = user.split("Draft:\n", 1)[1]
    return Reply.json({"prompt": "Please read carefully. " + draft})


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[LoopbackLLM]:
    with LoopbackLLM(responder=_reword) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        yield server


def test_llm_worded_variants_one_call_each_none_on_rerun(
    tmp_path: Path, llm: LoopbackLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    base = project(tmp_path / "project")
    home = str(tmp_path / "home")
    args = [str(base), "--count", "4", "--seed", "2", "--judge", "openai:mini", "--home", home]
    code, err = _vary_cli(*args, capsys=capsys)
    assert code == 0, err
    assert llm.count == 4
    loaded = [c for c in load_candidates(tmp_path / "project" / "candidates") if c.parent]
    assert len(loaded) == 4
    for candidate in loaded:
        assert candidate.system_prompt.startswith("Please read carefully. ")
        assert json.loads(candidate.edit)["worded_by"] == "openai:mini"
    rule_ids = {v.id for v in vary(base, 4, seed=2).written}
    assert rule_ids.isdisjoint(c.id for c in loaded)  # worded variants never collide
    code, _ = _vary_cli(*args, capsys=capsys)
    assert code == 0 and llm.count == 4
    for candidate in loaded:  # files gone: the home's judge cache answers
        Path(candidate.source).unlink()
    code, _ = _vary_cli(*args, capsys=capsys)
    assert code == 0 and llm.count == 4
    assert len([c for c in load_candidates(tmp_path / "project" / "candidates") if c.parent]) == 8


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        (Reply.text("Sure! Here is a better prompt."), "the reply is not a JSON object"),
        (Reply.json({"text": "Be precise."}), 'the reply needs a non-empty "prompt" string'),
        (Reply.json({"prompt": "Answer well."}), "must keep exactly the placeholders"),
    ],
)
def test_a_malformed_llm_reply_is_one_line_exit_2(
    tmp_path: Path,
    reply: Reply,
    problem: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    base = project(tmp_path / "project")
    with LoopbackLLM(responder=lambda provider, body: reply) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        code, err = _vary_cli(
            str(base), "--count", "1", "--judge", "openai:mini",
            "--home", str(tmp_path / "home"), capsys=capsys,
        )  # fmt: skip
    # (one variant: with two in flight, the abandoned call's socket reset makes the loopback
    # server print its own traceback into the same stderr)
    assert code == 2 and "Traceback" not in err, err
    last = err.splitlines()[-1]
    assert last.startswith("error: --judge openai:mini: no variant written: ") and problem in last
    assert [p.name for p in base.parent.iterdir()] == ["base.md"]
