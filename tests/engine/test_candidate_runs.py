"""Runs over several candidates end to end and without network.

The target is ``tests/loopback_llm.py`` in the OpenAI wire format, answering per system
prompt; the judge and the embedder are the local ones; the analyzer is the real one.
Graders are files of a project folder written by each test (``write_project``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest

from engine.candidates.plan import project_digest
from engine.lake import list_parts, read_table
from engine.models import RunConfig
from engine.runner import estimate_run, run_evaluation
from engine.settings import Paths
from engine.testsets import load_test_set
from evalhouse.cli import main
from tests.loopback_llm import LoopbackLLM, Reply

ROOT = Path(__file__).resolve().parents[2]

CASES = [
    ("q1", "How many risk tiers does the Act define?", "Four risk tiers."),
    ("q2", "Who enforces the Act?", "National market surveillance authorities."),
    ("q3", "When does the Act apply?", "From August 2026."),
    ("q4", "What does the Act ban?", "Social scoring by public authorities."),
]
EXPECTED = {query: expected for _, query, expected in CASES}

GRADERS = {
    "exact.yaml": "type: exact-match\noptions: {case: insensitive}\n",
    "has-tiers.yaml": (
        "type: contains\noptions: {values: [four, risk, tiers], mode: all, case: insensitive}\n"
        "weight: 0.5\n"
    ),
    "cites.yaml": "type: regex\noptions:\n  pattern: '\\[Source: [^\\]]+\\]'\n",
    "no-sorry.yaml": "type: regex\noptions: {pattern: sorry, flags: i, must_match: false}\n",
}
TERSE = """---
name: Terse helper
model: loopback-chat
user_template: "{{input}}"
recommended_graders: exact:0.5, has-tiers:0.3, cites:0.2, accuracy:1
---
You are terse. Answer with the reference answer only.
"""
CITE = """---
name: Citing helper
model: loopback-chat
temperature: 0.3
user_template: "Question: {{input}}"
---
You always cite your source as [Source: page].
"""
GRADER_IDS = "exact,has-tiers,cites,no-sorry,accuracy"


def write_project(root: Path) -> Path:
    """A project folder: family ``helper`` with ``base.md`` and ``cite.md``, four graders."""
    (root / "graders").mkdir(parents=True)
    for name, text in GRADERS.items():
        (root / "graders" / name).write_text(text, encoding="utf-8")
    family = root / "candidates" / "helper"
    family.mkdir(parents=True)
    (family / "base.md").write_text(TERSE, encoding="utf-8")
    (family / "cite.md").write_text(CITE, encoding="utf-8")
    return root


def write_cases(path: Path, n_copies: int = 1) -> Path:
    """The four cases (``n_copies`` times, ids suffixed) with a claim and a ground-truth
    passage each, and a recorded response (used when no candidate answers)."""
    with open(path, "w", encoding="utf-8") as handle:
        for copy in range(n_copies):
            for cid, query, expected in CASES:
                suffix = f"-{copy:03d}" if n_copies > 1 else ""
                case = {
                    "id": f"{cid}{suffix}",
                    "domain": "acme.example",
                    "query": f"{query}{suffix}",
                    "response": "recorded: " + expected,
                    "expected_answer": {
                        "text": expected,
                        "claims": [{"id": "c1", "text": expected}],
                    },
                    "ground_truth": [
                        {
                            "chunk_id": "p1#0",
                            "page_url": "https://acme.example/act",
                            "text": f"The Act says: {expected}",
                        }
                    ],
                }
                handle.write(json.dumps(case) + "\n")
    return path


def answer(provider: str, body: dict[str, Any]) -> Reply:
    """The terse candidate answers with the reference (but apologises for q4); the citing
    candidate adds a source. Any other prompt gets a 400, so a wrong request shows up."""
    messages = body.get("messages") or []
    system = messages[0]["content"] if len(messages) == 2 else ""
    user = messages[-1]["content"] if messages else ""
    query = user.removeprefix("Question: ").split("-")[0]
    base_query = next((q for q in EXPECTED if query.startswith(q.rstrip("?"))), None)
    if base_query is None:
        return Reply(status=400, raw_body=b'{"error": "unknown question"}')
    expected = EXPECTED[base_query]
    if "terse" in system:
        return Reply.text(
            "Sorry, I cannot say." if base_query.startswith("What does") else expected
        )
    if "cite" in system:
        return Reply.text(f"{expected} [Source: page]")
    return Reply(status=400, raw_body=b'{"error": "unknown system prompt"}')


def candidate_of(request_body: dict[str, Any] | None) -> str:
    system = (request_body or {}).get("messages", [{}])[0].get("content", "")
    return "helper" if "terse" in system else "helper-cite"


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[LoopbackLLM]:
    with LoopbackLLM(responder=answer) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        yield server


@pytest.fixture(autouse=True)
def _keep_home_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # evalhouse.cli sets EVALHOUSE_HOME for its children; undo it after each test.
    monkeypatch.setenv("EVALHOUSE_HOME", os.environ.get("EVALHOUSE_HOME", ""))


def run_cli(home: Paths, *args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["run", "--home", str(home.home), "--no-ingest", *args])
    out, err = capsys.readouterr()
    return code, out, err


# ----------------------------------------------------------------------------- end to end


def test_two_candidates_one_run_weighted_by_hand(
    home: Paths, tmp_path: Path, llm: LoopbackLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    project = write_project(tmp_path / "project")
    test_set = write_cases(tmp_path / "cases.jsonl")
    code, out, err = run_cli(
        home,
        "--test-set", str(test_set), "--name", "two", "--project", str(project),
        "--candidates", "helper,helper-cite", "--graders", GRADER_IDS,
        capsys=capsys,
    )  # fmt: skip
    assert code == 0, err
    assert "(4 samples x 2 candidates (helper, helper-cite), graders exact, has-tiers" in err
    run_id = out.strip().splitlines()[-1]

    # One target call per (case, candidate), each with its own rendered prompts.
    assert llm.count == 8
    per = Counter(candidate_of(r.body) for r in llm.requests)
    assert per == {"helper": 4, "helper-cite": 4}
    cite = next(r.body for r in llm.requests if candidate_of(r.body) == "helper-cite")
    assert cite is not None and cite["temperature"] == 0.3 and cite["model"] == "loopback-chat"
    assert cite["messages"][1]["content"].startswith("Question: ")

    results = read_table(home.lake, "results", run_id).to_pylist()
    assert sorted((r["sample_id"], r["candidate"]) for r in results) == sorted(
        (cid, c) for cid, _, _ in CASES for c in ("helper", "helper-cite")
    )
    assert all(r["error"] is None for r in results)
    assert {r["ai_provider"] for r in results} == {
        "openai:loopback-chat@helper",
        "openai:loopback-chat@helper-cite",
    }
    by_result = {(r["candidate"], r["sample_id"]): r for r in results}
    assert by_result[("helper", "q1")]["response"] == "Four risk tiers."
    for table in ("claims", "highlights", "verdicts"):
        rows = read_table(home.lake, table, run_id).to_pylist()
        assert rows and {r["candidate"] for r in rows} == {"helper", "helper-cite"}, table
    metrics = read_table(home.lake, "iteration_metrics", run_id).to_pylist()
    assert sorted((m["candidate"], m["samples"]) for m in metrics) == [
        ("helper", 4),
        ("helper-cite", 4),
    ]

    # grader_scores: one row per (iteration, sample, candidate, grader).
    graded = read_table(home.lake, "grader_scores", run_id).to_pylist()
    keys = [(g["iteration"], g["sample_id"], g["candidate"], g["grader"]) for g in graded]
    assert len(keys) == len(set(keys)) == 4 * 2 * 5
    score = {(g["candidate"], g["sample_id"], g["grader"]): g for g in graded}
    assert score[("helper", "q4", "no-sorry")]["passed"] is False
    assert score[("helper", "q1", "exact")]["score"] == 1.0
    assert score[("helper-cite", "q1", "exact")]["score"] == 0.0
    assert score[("helper-cite", "q2", "cites")]["passed"] is True
    assert score[("helper", "q2", "has-tiers")]["score"] == 0.0
    assert score[("helper", "q1", "has-tiers")]["reason"] == "found all 3 values"
    # accuracy grader = the analyzer's accuracy / 100 of the same sample
    for (cand, sid), row in by_result.items():
        assert score[(cand, sid, "accuracy")]["score"] == pytest.approx(row["accuracy"] / 100)
    # Weights: helper declares its own (no-sorry 0); helper-cite takes the files' weights.
    assert {g: score[("helper", "q1", g)]["weight"] for g in GRADER_IDS.split(",")} == {
        "exact": 0.5, "has-tiers": 0.3, "cites": 0.2, "no-sorry": 0.0, "accuracy": 1.0,
    }  # fmt: skip
    assert {g: score[("helper-cite", "q1", g)]["weight"] for g in GRADER_IDS.split(",")} == {
        "exact": 1.0, "has-tiers": 0.5, "cites": 1.0, "no-sorry": 1.0, "accuracy": 1.0,
    }  # fmt: skip

    # By hand. helper: exact q1-q3 right, q4 apologises -> 0.75; has-tiers: q1 has all
    # three words, q2-q4 none -> 0.25; cites never -> 0; no-sorry fails q4 -> 0.75.
    def acc(cand: str) -> float:
        return sum(by_result[(cand, c)]["accuracy"] / 100 for c, _, _ in CASES) / 4

    helper_means = {"exact": 0.75, "has-tiers": 0.25, "cites": 0.0, "no-sorry": 0.75}
    helper_means["accuracy"] = acc("helper")
    helper_weighted = (0.5 * 0.75 + 0.3 * 0.25 + 0.2 * 0.0 + 1.0 * helper_means["accuracy"]) / (
        0.5 + 0.3 + 0.2 + 1.0
    )
    # helper-cite: exact never (the source is appended); has-tiers q1 only -> 0.25; cites
    # always -> 1; no-sorry always passes -> 1.
    cite_means = {"exact": 0.0, "has-tiers": 0.25, "cites": 1.0, "no-sorry": 1.0}
    cite_means["accuracy"] = acc("helper-cite")
    cite_weighted = (
        1.0 * 0.0 + 0.5 * 0.25 + 1.0 * 1.0 + 1.0 * 1.0 + 1.0 * cite_means["accuracy"]
    ) / 4.5

    from ingest import ingest
    from warehouse.queries import Warehouse

    ingest(home)
    wh = Warehouse(home.warehouse)
    scores = wh.sql(
        "SELECT * FROM candidate_scores WHERE run_id = $run ORDER BY candidate", {"run": run_id}
    ).frame.to_dicts()
    assert [s["candidate"] for s in scores] == ["helper", "helper-cite"]
    helper, cite_row = scores
    assert helper["weighted_score"] == pytest.approx(helper_weighted)
    assert cite_row["weighted_score"] == pytest.approx(cite_weighted)
    assert helper["equal_weight_score"] == pytest.approx(sum(helper_means.values()) / 5)
    assert cite_row["equal_weight_score"] == pytest.approx(sum(cite_means.values()) / 5)
    assert (helper["samples"], helper["graders"], helper["errors"]) == (4, 5, 0)
    summary = wh.sql(
        "SELECT candidate, grader, results, mean_score, pass_rate, weight FROM grader_summary "
        "WHERE run_id = $run ORDER BY candidate, grader",
        {"run": run_id},
    ).frame.to_dicts()
    got = {(s["candidate"], s["grader"]): s for s in summary}
    assert len(got) == 10 and all(s["results"] == 4 for s in summary)
    for grader, mean in helper_means.items():
        assert got[("helper", grader)]["mean_score"] == pytest.approx(mean), grader
    for grader, mean in cite_means.items():
        assert got[("helper-cite", grader)]["mean_score"] == pytest.approx(mean), grader
    assert got[("helper-cite", "cites")]["pass_rate"] == 1.0
    stored = json.loads(
        wh.sql("SELECT config FROM runs WHERE run_id = $run", {"run": run_id}).frame["config"][0]
    )
    assert stored["candidates"] == ["helper", "helper-cite"]
    assert stored["project"] == str(project.resolve())

    # The CI gate on one candidate of the run.
    capsys.readouterr()
    ok = main(["check", run_id, "--home", str(home.home), "--candidate", "helper",
               "--min", "grader:exact=0.5"])  # fmt: skip
    assert ok == 0, capsys.readouterr()
    report = tmp_path / "check.xml"
    failed = main(["check", run_id, "--home", str(home.home), "--candidate", "helper",
                   "--min", "grader:exact=0.5", "--min", "grader:cites=0.5",
                   "--format", "junit", "--output", str(report)])  # fmt: skip
    assert failed == 1
    table = capsys.readouterr().out
    assert "FAIL" in table and "grader:cites >= 0.5" in table
    suite = ET.parse(report).getroot().find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures")) == ("2", "1")
    cases = {c.get("name"): c.find("failure") is not None for c in suite.iter("testcase")}
    assert cases == {"grader:exact >= 0.5 (0-1)": False, "grader:cites >= 0.5 (0-1)": True}
    assert main(["check", run_id, "--home", str(home.home), "--candidate", "helper-cite",
                 "--min", "grader:cites=0.5"]) == 0  # fmt: skip


# ----------------------------------------------------------------------------- without candidates


def test_graders_without_candidates_grade_the_recorded_responses(
    home: Paths, tmp_path: Path, llm: LoopbackLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    project = write_project(tmp_path / "project")
    test_set = write_cases(tmp_path / "cases.jsonl")
    common = ["--test-set", str(test_set), "--project", str(project)]
    code, out, err = run_cli(
        home, *common, "--name", "graded", "--graders", "exact,no-sorry,accuracy", capsys=capsys
    )
    assert code == 0, err
    assert "(4 samples, graders exact, no-sorry, accuracy)" in err
    run_id = out.strip().splitlines()[-1]
    assert llm.count == 0  # recorded responses: no target
    results = read_table(home.lake, "results", run_id).to_pylist()
    assert len(results) == 4 and {r["candidate"] for r in results} == {""}
    graded = read_table(home.lake, "grader_scores", run_id).to_pylist()
    assert len(graded) == 12 and {g["candidate"] for g in graded} == {""}
    by = {(g["sample_id"], g["grader"]): g for g in graded}
    # "recorded: Four risk tiers." is not the expected answer; nobody apologises.
    assert by[("q1", "exact")]["score"] == 0.0 and by[("q1", "no-sorry")]["passed"] is True
    assert {g["weight"] for g in graded} == {1.0}
    metrics = read_table(home.lake, "iteration_metrics", run_id).to_pylist()
    assert [(m["candidate"], m["samples"]) for m in metrics] == [("", 4)]

    # Without --graders or --candidates a run is what it always was: no grader rows.
    code, out, err = run_cli(home, *common, "--name", "plain", capsys=capsys)
    assert code == 0, err
    plain = out.strip().splitlines()[-1]
    assert read_table(home.lake, "grader_scores", plain).num_rows == 0
    config = json.loads(read_table(home.lake, "runs", plain, 0).to_pylist()[-1]["config"])
    assert config["candidates"] is None and config["project"] is None


# ----------------------------------------------------------------------------- refusals


BREAKAGES: dict[str, tuple[str, str, list[str]]] = {
    # name: (file to write (relative to the project), its text, expected message parts)
    "grader type": (
        "graders/bad.yaml",
        "type: exact-matsh\n",
        ["bad.yaml", "'type'"],
    ),
    "grader option": (
        "graders/cites.yaml",
        "type: regex\noptions: {pattern: '[unclosed'}\n",
        ["cites.yaml", "pattern"],
    ),
    "template variable": (
        "candidates/helper/cite.md",
        "---\nmodel: m\nuser_template: 'Q: {{question}}'\n---\nbody\n",
        ["cite.md", "user_template", "unknown template variable {{question}}"],
    ),
    "front matter": (
        "candidates/helper/cite.md",
        "---\nmodel: m\ntemprature: 0.2\n---\nbody\n",
        ["cite.md", "temprature"],
    ),
}


@pytest.mark.parametrize("breakage", sorted(BREAKAGES))
def test_malformed_files_are_refused_before_any_call(
    breakage: str,
    home: Paths,
    tmp_path: Path,
    llm: LoopbackLLM,
    capsys: pytest.CaptureFixture[str],
) -> None:
    project = write_project(tmp_path / "project")
    relative, text, expected = BREAKAGES[breakage]
    (project / relative).write_text(text, encoding="utf-8")
    test_set = write_cases(tmp_path / "cases.jsonl")
    args = ["--test-set", str(test_set), "--name", "broken", "--project", str(project),
            "--candidates", "helper,helper-cite", "--graders", "exact,cites"]  # fmt: skip
    for extra in ([], ["--estimate"]):
        code, _, err = run_cli(home, *args, *extra, capsys=capsys)
        assert code == 2, err
        assert err.startswith("error: ") and "Traceback" not in err
        for part in expected:
            assert part in err, (part, err)
    assert llm.count == 0
    assert not (home.lake / "runs").exists()


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--candidates", "helper,helper-nope"], "unknown candidate 'helper-nope'"),
        (["--candidates", "helper", "--graders", "exact,nope"], "unknown grader 'nope'"),
        (["--candidates", "helper", "--graders", "helpful"], "local judge"),
        (["--candidates", "helper", "--target", "recorded"], None),
        (["--candidates", "helper", "--project", "missing"], "does not exist"),
    ],
)
def test_unknown_ids_and_unusable_graders_are_refused_before_any_call(
    flags: list[str],
    expected: str | None,
    home: Paths,
    tmp_path: Path,
    llm: LoopbackLLM,
    capsys: pytest.CaptureFixture[str],
) -> None:
    project = write_project(tmp_path / "project")
    (project / "graders" / "helpful.yaml").write_text(
        "type: llm-rubric\nrubric: Is the answer helpful?\n", encoding="utf-8"
    )
    if expected is None:  # a candidate without a model and no --target openai:MODEL
        (project / "candidates" / "helper" / "base.md").write_text(
            TERSE.replace("model: loopback-chat\n", ""), encoding="utf-8"
        )
        expected = "field 'model': candidate 'helper' names no model"
    test_set = write_cases(tmp_path / "cases.jsonl")
    args = ["--test-set", str(test_set), "--name", "refused", "--project", str(project), *flags]
    if "missing" in flags:
        args[args.index("missing")] = str(tmp_path / "missing")
    code, _, err = run_cli(home, *args, capsys=capsys)
    assert code == 2, err
    assert expected in err and "Traceback" not in err
    assert llm.count == 0
    assert not (home.lake / "runs").exists()


# ----------------------------------------------------------------------------- templates, estimate


def test_a_case_a_template_cannot_render_is_an_error_row_of_that_candidate(
    home: Paths, tmp_path: Path, llm: LoopbackLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    project = write_project(tmp_path / "project")
    (project / "candidates" / "helper" / "cite.md").write_text(
        CITE.replace('"Question: {{input}}"', '"Question ({{metadata.level}}): {{input}}"'),
        encoding="utf-8",
    )
    path = write_cases(tmp_path / "cases.jsonl")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    lines[0]["metadata"] = {"level": "easy"}  # only q1 can be rendered for helper-cite
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))

    def answer_any(provider: str, body: dict[str, Any]) -> Reply:
        return Reply.text("Four risk tiers. [Source: page]")

    llm.responder = answer_any
    code, out, err = run_cli(
        home, "--test-set", str(path), "--name", "tpl", "--project", str(project),
        "--candidates", "helper,helper-cite", "--graders", "cites", "--max-failed", "0.5",
        capsys=capsys,
    )  # fmt: skip
    assert code == 0, err
    run_id = out.strip().splitlines()[-1]
    assert Counter(candidate_of(r.body) for r in llm.requests) == {"helper": 4, "helper-cite": 1}
    cite_request = next(r.body for r in llm.requests if candidate_of(r.body) == "helper-cite")
    assert cite_request is not None
    assert cite_request["messages"][1]["content"].startswith("Question (easy): How many")
    results = {
        (r["candidate"], r["sample_id"]): r
        for r in read_table(home.lake, "results", run_id).to_pylist()
    }
    assert len(results) == 8
    broken = results[("helper-cite", "q2")]
    assert broken["error"].startswith("template: case 'q2': candidate 'helper-cite'")
    assert "metadata.level" in broken["error"] and broken["response"] == ""
    assert results[("helper", "q2")]["error"] is None
    graded = {
        (g["candidate"], g["sample_id"]): g
        for g in read_table(home.lake, "grader_scores", run_id).to_pylist()
    }
    assert graded[("helper-cite", "q2")]["score"] is None
    assert graded[("helper-cite", "q2")]["reason"] == broken["error"]
    assert graded[("helper-cite", "q1")]["passed"] is True


def test_estimate_counts_candidate_target_calls_and_grader_judge_calls(
    tmp_path: Path, llm: LoopbackLLM, capsys: pytest.CaptureFixture[str], home: Paths
) -> None:
    project = write_project(tmp_path / "project")
    (project / "graders" / "helpful.yaml").write_text(
        "type: llm-rubric\nrubric: Is the answer helpful?\n", encoding="utf-8"
    )
    path = write_cases(tmp_path / "cases.jsonl")
    ts = load_test_set(path)
    extra = {
        "project": str(project),
        "candidates": ["helper", "helper-cite"],
        "graders": ["exact", "helpful"],
    }
    config = RunConfig(
        name="e", test_set=str(path), iterations=2, judge="openai:gpt-4o-mini", extra=extra
    )
    estimate = estimate_run(config, ts)
    # 4 cases x 2 candidates x 2 iterations, one target call each
    assert estimate.target_calls == 16
    # per answer, batched (the default): extract claims + 1 verification of all claims
    # (which names the chunks, so no chunk-use call) + rubric + relevance + correctness
    # = 5 judge_sample calls, + 1 llm-rubric grader
    assert estimate.judge_calls == 16 * 6
    per_prompt = estimate_run(config.model_copy(update={"judge_calls": "per_prompt"}), ts)
    # per answer, one call per prompt: extract claims + 5 verifications (answer unknown) +
    # rubric + relevance + correctness + 1 context chunk = 10 judge_sample calls, + 1
    # llm-rubric grader
    assert per_prompt.judge_calls == 16 * 11
    assert any("2 candidates x 4 cases" in n for n in estimate.notes)
    assert estimate.cost_usd > 0  # gpt-4o-mini has a price; loopback-chat does not
    local = estimate_run(config.model_copy(update={"judge": "local"}), ts)
    assert (local.target_calls, local.judge_calls) == (16, 0)
    assert any("llm-rubric graders need" in n for n in local.notes)
    code, out, err = run_cli(
        home, "--test-set", str(path), "--name", "e", "--project", str(project),
        "--candidates", "helper,helper-cite", "--graders", "exact", "--iterations", "3",
        "--estimate", capsys=capsys,
    )  # fmt: skip
    assert code == 0, err
    assert "target calls:  24" in out and "judge calls:   0" in out
    assert llm.count == 0 and not (home.lake / "runs").exists()


def test_a_resume_with_changed_candidate_files_is_refused(
    home: Paths, tmp_path: Path, llm: LoopbackLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    project = write_project(tmp_path / "project")
    path = write_cases(tmp_path / "cases.jsonl")
    args = ["--test-set", str(path), "--name", "r", "--project", str(project),
            "--candidates", "helper,helper-cite", "--graders", "exact", "--only", "q1"]  # fmt: skip
    code, out, err = run_cli(home, *args, capsys=capsys)
    assert code == 0, err
    run_id = out.strip().splitlines()[-1]
    digest = json.loads(read_table(home.lake, "runs", run_id, 0).to_pylist()[-1]["config"])[
        "project_digest"
    ]
    assert digest == project_digest(project)
    (project / "candidates" / "helper" / "cite.md").write_text(
        CITE.replace("always cite", "sometimes cite"), encoding="utf-8"
    )
    calls = llm.count
    code, _, err = run_cli(home, *args, "--resume", run_id, capsys=capsys)
    assert code == 2 and "changed since run" in err, err
    assert llm.count == calls
    spec = RunConfig(name="r", test_set=str(path), candidates="helper", project=str(project))
    assert spec is not None and spec.candidates == ("helper",) and spec.graders is None


# ----------------------------------------------------------------------------- kill -9


def _sample_of(queries: dict[str, str], body: dict[str, Any] | None) -> tuple[str, str]:
    user = (body or {})["messages"][-1]["content"]
    return queries[user.removeprefix("Question: ")], candidate_of(body)


@pytest.mark.slow
def test_kill_9_of_a_two_candidate_run_then_resume(home: Paths, tmp_path: Path) -> None:
    """``evalhouse run --candidates`` killed after its first flush and re-run: one result
    per (iteration, sample, candidate), one grader row per (..., grader), and no target
    call repeated for a flushed sample."""
    project = write_project(tmp_path / "project")
    path = write_cases(tmp_path / "cases.jsonl", n_copies=12)  # 48 cases, 96 answers
    cases = [json.loads(line) for line in path.read_text().splitlines()]
    queries = {c["query"]: c["id"] for c in cases}
    with LoopbackLLM(delay=0.02, responder=answer) as server:
        env = {
            **os.environ,
            "OPENAI_BASE_URL": server.url,
            "OPENAI_API_KEY": "sk-test",
            "PYTHONPATH": str(ROOT),
        }
        command = [
            sys.executable, "-m", "evalhouse.cli", "run", "--home", str(home.home),
            "--test-set", str(path), "--name", "crash", "--project", str(project),
            "--candidates", "helper,helper-cite", "--graders", GRADER_IDS,
            "--concurrency", "4", "--no-ingest",
        ]  # fmt: skip
        proc = subprocess.Popen(
            command, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        deadline = time.monotonic() + 120
        while not list_parts(home.lake, ["results"]):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no flush in time"
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        (run_dir,) = (home.lake / "runs").iterdir()
        run_id = run_dir.name.removeprefix("run_id=")
        done_before = {
            (r["sample_id"], r["candidate"])
            for r in read_table(home.lake, "results", run_id).to_pylist()
        }
        assert 0 < len(done_before) < 96
        first = server.count
        again = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True)
        assert again.returncode == 0, again.stderr
        assert again.stdout.strip().splitlines()[-1] == run_id
        after = [_sample_of(queries, r.body) for r in server.requests[first:]]
    assert not set(after) & done_before  # flushed answers were never asked for again
    assert len(after) == len(set(after))
    everything = {(c["id"], cand) for c in cases for cand in ("helper", "helper-cite")}
    assert set(after) | done_before == everything
    results = read_table(home.lake, "results", run_id).to_pylist()
    keys = [(r["iteration"], r["sample_id"], r["candidate"]) for r in results]
    assert len(keys) == len(set(keys)) == 96
    graded = read_table(home.lake, "grader_scores", run_id).to_pylist()
    gkeys = [(g["iteration"], g["sample_id"], g["candidate"], g["grader"]) for g in graded]
    assert len(gkeys) == len(set(gkeys)) == 96 * 5
    assert {(k[1], k[2]) for k in gkeys} == everything


# ----------------------------------------------------------------------------- http endpoints


class Endpoint:
    """A loopback RAG service: POST /query (JSON body) and GET /ask?q=..., answers under
    ``data.answer``; the first POST gets a 503 so the retry path runs."""

    def __init__(self) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from threading import Lock, Thread
        from urllib.parse import parse_qs, urlparse

        self.seen: list[tuple[str, str, Any]] = []
        self.lock = Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return

            def _reply(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with owner.lock:
                    first = not any(m == "POST" for m, _, _ in owner.seen)
                    owner.seen.append(("POST", self.headers.get("X-Team", ""), body))
                if first:
                    self._reply(503, {"error": "warming up"})
                    return
                self._reply(200, {"data": {"answer": f"POST answer to {body['query']}"}})

            def do_GET(self) -> None:
                query = parse_qs(urlparse(self.path).query)["q"][0]
                with owner.lock:
                    owner.seen.append(("GET", "", query))
                self._reply(200, {"output": f"GET answer to {query}"})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_http_endpoint_candidates_post_and_get(
    home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = write_project(tmp_path / "project")
    family = project / "candidates" / "rag"
    family.mkdir()
    service = Endpoint()
    try:
        (family / "base.md").write_text(
            "---\nrunner: http_endpoint\n"
            f"endpoint_url: {service.url}/query\n"
            "endpoint_headers: {X-Team: evals}\n"
            'endpoint_body_template: \'{"query": "{{input}}", "top_k": 3}\'\n'
            "endpoint_response_path: data.answer\n---\n",
            encoding="utf-8",
        )
        (family / "get.md").write_text(
            "---\nrunner: http_endpoint\n"
            f"endpoint_url: '{service.url}/ask?q={{{{input}}}}'\n"
            "endpoint_method: GET\n---\n",
            encoding="utf-8",
        )
        path = write_cases(tmp_path / "cases.jsonl")
        code, out, err = run_cli(
            home, "--test-set", str(path), "--name", "rag", "--project", str(project),
            "--candidates", "rag,rag-get", "--graders", "has-tiers", "--concurrency", "1",
            "--option", "target_backoff_s=0.01", capsys=capsys,
        )  # fmt: skip
        assert code == 0, err
        run_id = out.strip().splitlines()[-1]
        posts = [s for s in service.seen if s[0] == "POST"]
        gets = [s for s in service.seen if s[0] == "GET"]
    finally:
        service.close()
    assert len(posts) == 5 and len(gets) == 4  # one 503 retried
    assert {p[1] for p in posts} == {"evals"}
    assert posts[0][2] == {"query": CASES[0][1], "top_k": 3}
    assert sorted(g[2] for g in gets) == sorted(q for _, q, _ in CASES)  # URL-decoded
    results = {
        (r["candidate"], r["sample_id"]): r
        for r in read_table(home.lake, "results", run_id).to_pylist()
    }
    assert results[("rag", "q1")]["response"] == f"POST answer to {CASES[0][1]}"
    assert results[("rag-get", "q1")]["response"] == f"GET answer to {CASES[0][1]}"
    assert (
        results[("rag-get", "q1")]["ai_provider"]
        == f"http:{service.url}/ask?q={{{{input}}}}@rag-get"
    )
    graded = read_table(home.lake, "grader_scores", run_id).to_pylist()
    assert len(graded) == 8
    # "How many risk tiers ..." carries "risk" and "tiers" but not "four": 2 of 3
    q1 = {g["candidate"]: g["score"] for g in graded if g["sample_id"] == "q1"}
    assert q1 == {"rag": pytest.approx(2 / 3), "rag-get": pytest.approx(2 / 3)}


# ----------------------------------------------------------------------------- injected plan


def test_rubric_grading_costs_count_and_the_timer_sees_every_sample(
    home: Paths, tmp_path: Path
) -> None:
    """An injected plan (graders only) with a rubric judge that reports usage: the graders'
    tokens and cost join the sample's, a grader that raises a bug leaves a null row, and
    ``grade_timer`` is called once per sample."""
    from engine.candidates.plan import plan_responses
    from engine.graders.rubric import RubricVerdict
    from engine.judges.base import Usage
    from tests.engine.test_runner import config_for, fake_components

    project = write_project(tmp_path / "project")
    (project / "graders" / "helpful.yaml").write_text(
        "type: llm-rubric\nrubric: Is it helpful?\nthreshold: 0.5\n", encoding="utf-8"
    )

    class RubricJudge:
        name = "fake:rubric"

        async def grade_rubric(
            self, rubric: str, question: str, answer: str, expected: str, context: Any
        ) -> RubricVerdict:
            if "When does" in question:
                raise ZeroDivisionError("bug in a judge")
            return RubricVerdict(
                score=0.6, reason="ok", usage=Usage(input_tokens=7, output_tokens=3, cost_usd=0.01)
            )

    ts = load_test_set(write_cases(tmp_path / "cases.jsonl"))
    components, _, _ = fake_components()
    components.plan = plan_responses(project, ["helpful", "exact"], judge=RubricJudge())
    timed: list[float] = []
    components.grade_timer = timed.append
    out = run_evaluation(config_for(ts), home, test_set=ts, components=components)
    assert out.errors == 0 and len(timed) == 4 and all(t >= 0 for t in timed)
    results = {r["sample_id"]: r for r in read_table(home.lake, "results", out.run_id).to_pylist()}
    assert results["q1"]["judge_input_tokens"] == 10 + 7  # fake judge_sample + rubric
    assert results["q1"]["judge_output_tokens"] == 5 + 3
    assert results["q1"]["cost_usd"] == pytest.approx(0.01)
    assert out.cost_usd == pytest.approx(0.03)  # q3's grading failed: no cost
    graded = {
        (g["sample_id"], g["grader"]): g
        for g in read_table(home.lake, "grader_scores", out.run_id).to_pylist()
    }
    assert graded[("q1", "helpful")]["passed"] is True and graded[("q1", "exact")]["score"] == 0
    assert graded[("q3", "helpful")]["score"] is None
    assert graded[("q3", "helpful")]["reason"] == (
        "grader 'helpful' failed: ZeroDivisionError: bug in a judge"
    )
    assert graded[("q3", "exact")]["score"] == 0.0  # the other grader still ran
