"""A grader file may name its own judge model (the eval-harness write-up's "model per
grader": ``config: {model: gpt-4.1-mini}``, or ``judge: openai:gpt-4o-mini``): that
grader is judged by it, every other grader by the run's judge."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
import yaml

from engine.graders import GradeInput, load_graders
from engine.graders.spec import GraderFileError, parse_grader
from engine.lake import read_table
from engine.models import RunConfig, TestCase
from engine.run.components import build_components
from engine.settings import Paths
from evalhouse.cli import main
from tests.loopback_llm import LoopbackLLM, Reply, loopback_llm

__all__ = ["loopback_llm"]

# The write-up's "Cheaper Judge Models" grader, verbatim but for the rubric.
WRITE_UP_FAST = """name: Helpfulness (Fast)
type: llm-judge
config:
  model: gpt-4.1-mini    # Override: use cheaper model for this grader
  temperature: 0.1
rubric: |
  Is the answer helpful to the person who asked?
"""


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    graders = tmp_path / "project" / "graders"
    graders.mkdir(parents=True)
    for name, text in files.items():
        (graders / name).write_text(text, encoding="utf-8")
    return graders.parent


def _cases(tmp_path: Path) -> Path:
    path = tmp_path / "cases.jsonl"
    rows = [
        {"id": f"q{i}", "query": "How much is Pro?", "response": f"Pro costs ${i}0 a month.",
         "expected_answer": {"text": "Pro costs $20 a month."}}
        for i in (1, 2)
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def openai_here(loopback_llm: LoopbackLLM, monkeypatch: pytest.MonkeyPatch) -> LoopbackLLM:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", loopback_llm.url)
    loopback_llm.responder = lambda provider, body: Reply.json(
        {"pass": True, "score": 0.9, "reason": f"judged by {body['model']}"}
    )
    return loopback_llm


def test_the_write_up_spelling_is_read_as_the_graders_judge() -> None:
    spec = parse_grader(yaml.safe_load(WRITE_UP_FAST), "fast.yaml", "fast", None)
    assert (spec.type, spec.judge, spec.judge_temperature) == ("llm-rubric", "gpt-4.1-mini", 0.1)
    own = parse_grader(
        {"type": "g-eval", "rubric": "Coherence.", "judge": "openai:gpt-4o-mini"},
        "g.yaml",
        "g",
        None,
    )
    assert own.judge == "openai:gpt-4o-mini"


@pytest.mark.parametrize(
    ("raw", "line"),
    [
        ({"type": "regex", "options": {"pattern": "x"}, "judge": "openai:gpt-4o-mini"},
         "g.yaml: field 'judge': regex calls no judge of its own; a grader's judge is for "
         "llm-rubric, g-eval, factuality"),
        ({"type": "llm-rubric", "rubric": "Be kind.", "judge": "openai:a",
          "config": {"model": "b"}},
         "g.yaml: field 'options.model': judge is given twice"),
        ({"type": "llm-rubric", "rubric": "Be kind.", "config": {"temperature": 5}},
         "g.yaml: field 'judge_temperature': input should be less than or equal to 2"),
    ],
)  # fmt: skip
def test_a_misplaced_grader_judge_is_refused(raw: dict[str, object], line: str) -> None:
    with pytest.raises(GraderFileError) as caught:
        parse_grader(raw, "g.yaml", "g", None)
    assert str(caught.value).startswith(line), str(caught.value)


def test_the_grader_judge_alone_calls_its_model(
    home: Paths, tmp_path: Path, openai_here: LoopbackLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    project = _project(
        tmp_path,
        {
            "fast.yaml": "type: llm-rubric\njudge: openai:gpt-4o-mini\n"
            "rubric: Is the answer helpful to the person who asked?\n",
            "price.yaml": "type: llm-rubric\nrubric: mentions the price\n",
        },
    )
    code = main(["run", "--home", str(home.home), "--test-set", str(_cases(tmp_path)),
                 "--name", "per-grader", "--project", str(project), "--graders", "fast,price",
                 "--no-ingest", "--workers", "1"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    # the run's judge is local: every call is the fast grader's, one per answer, its model
    assert [r.body["model"] for r in openai_here.requests if r.body] == ["gpt-4o-mini"] * 2
    run_id = out.strip().splitlines()[-1]
    rows = read_table(home.lake, "grader_scores", run_id, 1).to_pylist()
    by_grader = {(r["grader"], r["sample_id"]): r for r in rows}
    assert by_grader[("fast", "q1")]["reason"] == "judged by gpt-4o-mini"
    assert by_grader[("price", "q1")]["reason"].startswith("local judge: 0 of 1 criteria met")


def test_a_bare_model_takes_the_run_judges_provider_and_temperature(
    tmp_path: Path, openai_here: LoopbackLLM
) -> None:
    project = _project(tmp_path, {"fast.yaml": WRITE_UP_FAST})
    config = RunConfig(name="x", test_set="c.jsonl", judge="openai:gpt-4o")
    parts = build_components(config, Paths(home=tmp_path / "home"))
    (fast,) = load_graders(project / "graders", judge=parts.judge, judges=parts.grader_judges)
    case = TestCase(id="q", query="How much is Pro?")
    result = asyncio.run(fast.grade(GradeInput(output="Pro costs $20.", case=case)))
    asyncio.run(parts.aclose())
    assert result.reason == "judged by gpt-4.1-mini"
    (request,) = openai_here.requests
    assert request.body is not None
    assert (request.body["model"], request.body["temperature"]) == ("gpt-4.1-mini", 0.1)


def test_a_bare_model_on_a_local_run_is_refused_before_anything_runs(
    home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = _project(tmp_path, {"fast.yaml": WRITE_UP_FAST})
    code = main(["run", "--home", str(home.home), "--test-set", str(_cases(tmp_path)),
                 "--name", "x", "--project", str(project), "--graders", "fast",
                 "--estimate"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(
        f"error: grader 'fast' ({project / 'graders' / 'fast.yaml'}): its judge: model "
        "'gpt-4.1-mini' names no provider, and the run's judge 'local' has none to lend: "
        "write it as openai:gpt-4.1-mini"
    ), err
    assert err.count("\n") == 1


def test_the_estimate_counts_the_grader_judges_calls(
    home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = _project(
        tmp_path,
        {"fast.yaml": "type: g-eval\njudge: openai:gpt-4o-mini\n"
                      "rubric: mentions the price and cites a source\n"},
    )  # fmt: skip
    code = main(["run", "--home", str(home.home), "--test-set", str(_cases(tmp_path)),
                 "--name", "x", "--project", str(project), "--graders", "fast",
                 "--estimate"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    # 2 answers x 2 criteria, each one G-Eval score call with the grader's own judge
    assert re.search(r"^judge calls: +4$", out, re.M), out
    assert "graders with their own judge: openai:gpt-4o-mini" in out


def test_the_documented_grader_file_parses() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "judges-and-verifiers.md").read_text(
        encoding="utf-8"
    )
    block = re.search(r"```yaml\n\s*(# graders/helpful-fast\.yaml\n.*?)```", doc, re.S)
    assert block is not None
    text = "\n".join(line.strip() for line in block.group(1).splitlines())
    spec = parse_grader(yaml.safe_load(text), "helpful-fast.yaml", "helpful-fast", None)
    assert (spec.type, spec.judge) == ("llm-rubric", "openai:gpt-4o-mini")
