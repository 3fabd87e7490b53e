"""Prompt families end to end: a parent and 3 variants written by ``candidates vary``, one
``evalhouse run --candidates`` against the loopback LLM into a real DuckDB warehouse, the
lineage in SQL and the family tree with scores on the Leaderboard."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from engine.candidates.vary import vary
from engine.settings import Paths
from evalhouse.cli import main
from tests.dashboard.conftest import AppFactory, table
from tests.engine.test_candidate_runs import EXPECTED, write_cases
from tests.loopback_llm import LoopbackLLM, Reply

BASE = """---
name: Helper
model: loopback-chat
user_template: "Question: {{input}}"
recommended_graders: exact:1
---
You answer questions. Never guess.
"""


def _answer(provider: str, body: dict[str, Any]) -> Reply:
    """The reference answer while the prompt says ``Never guess``, else a hedge: so an
    ablation that drops that sentence scores lower than its parent."""
    system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
    query = user.removeprefix("Question: ")
    expected = next(e for q, e in EXPECTED.items() if query.startswith(q.rstrip("?")))
    return Reply.text(expected if "Never guess" in system else f"Maybe {expected}")


def test_lineage_reaches_sql_and_the_leaderboard(
    tmp_path: Path,
    home: Paths,
    app: AppFactory,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("EVALHOUSE_HOME", os.environ.get("EVALHOUSE_HOME", ""))
    root = tmp_path / "project"
    (root / "graders").mkdir(parents=True)
    (root / "graders" / "exact.yaml").write_text("type: exact-match\n", encoding="utf-8")
    family = root / "candidates" / "helper"
    family.mkdir(parents=True)
    (family / "base.md").write_text(BASE, encoding="utf-8")
    # seed 0 draws the ablation of "Never guess." among the 3 (checked below)
    variants = vary(family / "base.md", 3, seed=0).written
    ablated = [v for v in variants if v.edit.get("removed") == "Never guess."]
    assert len(ablated) == 1
    ids = ["helper", *(v.id for v in variants)]
    cases = write_cases(tmp_path / "cases.jsonl")
    with LoopbackLLM(responder=_answer) as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        code = main(
            ["run", "--home", str(home.home), "--test-set", str(cases), "--name", "family",
             "--project", str(root), "--candidates", ",".join(ids)]
        )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    sql = "SELECT candidate, parent, edit FROM candidate_lineage ORDER BY candidate"
    assert main(["sql", sql, "--home", str(home.home), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["candidate"]: r["parent"] for r in rows} == {
        "helper": None,
        **{v.id: "helper" for v in variants},
    }
    assert {r["candidate"]: r["edit"] for r in rows if r["parent"]} == {
        v.id: json.dumps(v.edit, sort_keys=True, separators=(",", ":")) for v in variants
    }

    at = app(home, "leaderboard")
    tree = table(at, "Δ vs parent")
    assert tree[0]["Candidate"] == "helper" and tree[0]["Score"] == pytest.approx(1.0)
    children = {r["Candidate"].split("└ ")[-1]: r for r in tree[1:]}
    assert set(children) == {v.id for v in variants}
    for row in children.values():
        assert row["Parent"] == "helper" and row["Candidate"].startswith("\u2003└ ")
    drop = children[ablated[0].id]
    assert drop["Score"] == pytest.approx(0.0) and drop["Δ vs parent"] == pytest.approx(-1.0)
    assert '"removed":"Never guess."' in drop["Edit"]
