"""``type: python`` graders: a function of the project scores each output in a worker
process with a time limit; every way it can misbehave is that sample's error row, and every
way its file can be wrong is one line before anything runs."""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path

import pytest

from engine.candidates.plan import project_digest
from engine.graders import GradeInput, GraderConfigError, GraderError, load_graders
from engine.graders.python_grader import PythonGrader
from engine.graders.python_worker import interpret
from engine.graders.spec import GraderFileError, parse_grader
from engine.graders.spec_files import read_grader_file
from engine.models import ExpectedAnswer, TestCase
from engine.settings import Paths
from evalhouse.cli import main
from ingest import ingest
from warehouse.queries import Warehouse

MISBEHAVES = """
import time

def score(sample):
    kind = sample.metadata["kind"]
    if kind == "raises":
        raise ValueError("no tone today")
    if kind == "seven":
        return 7
    if kind == "string":
        return "great"
    if kind == "sleeps":
        time.sleep(30)
    return 1.0
"""

GOOD = """
def score(response, reference):
    words = set(reference.lower().split())
    shared = [w for w in response.lower().split() if w in words]
    return len(shared) / len(response.split()), f"{len(shared)} words shared with the reference"
"""


def _project(root: Path, graders: dict[str, str], modules: dict[str, str]) -> Path:
    project = root / "project"
    (project / "graders").mkdir(parents=True)
    for name, text in {**graders, **modules}.items():
        (project / "graders" / name).write_text(text, encoding="utf-8")
    return project


def _grade(grader: PythonGrader, case: TestCase, output: str) -> tuple[float, str]:
    result = asyncio.run(grader.grade(GradeInput(output=output, case=case)))
    return result.score, result.reason


CASE = TestCase(
    id="q", query="How much is Pro?", expected_answer=ExpectedAnswer(text="Pro costs $20")
)


def test_a_good_function_scores_with_its_reason_called_by_keywords(tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        {"overlap.yaml": "type: python\nfunction: graders/overlap.py:score\n"},
        {"overlap.py": GOOD},
    )
    (grader,) = load_graders(project / "graders")
    assert isinstance(grader, PythonGrader)
    try:
        # "pro", "costs" and "$20" of 4 words: 3 / 4
        score, reason = _grade(grader, CASE, "Pro costs $20 monthly")
        assert (score, reason) == (0.75, "3 words shared with the reference")
        assert asyncio.run(grader.grade(GradeInput("Pro costs $20 monthly", CASE))).passed
    finally:
        grader.close()


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        ("raises", "python grader 'tone': tone.py:score raised ValueError: no tone today "
                   "(tone.py line 7)"),
        ("seven", "python grader 'tone': tone.py:score returned int 7: the score 7 is "
                  "outside 0-1"),
        ("string", "python grader 'tone': tone.py:score returned str 'great': return a score "
                   "0-1 (or a bool), a (score, reason) tuple, or a dict with 'score' and "
                   "'reason'"),
    ],
)  # fmt: skip
def test_each_misbehaviour_is_a_one_line_grader_error(
    tmp_path: Path, kind: str, reason: str
) -> None:
    project = _project(
        tmp_path,
        {"tone.yaml": "type: python\nfunction: tone.py:score\n"},
        {"tone.py": MISBEHAVES},
    )
    (grader,) = load_graders(project / "graders")
    assert isinstance(grader, PythonGrader)
    case = CASE.model_copy(update={"metadata": {"kind": kind}})
    try:
        with pytest.raises(GraderError) as caught:
            _grade(grader, case, "Pro costs $20.")
        assert str(caught.value) == reason
        # the worker survives a bad return: the next sample is scored
        ok = CASE.model_copy(update={"metadata": {"kind": "fine"}})
        assert _grade(grader, ok, "fine")[0] == 1.0
    finally:
        grader.close()


def test_a_call_past_its_limit_is_stopped_and_the_next_one_runs(tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        {"tone.yaml": "type: python\nfunction: tone.py:score\ntimeout_s: 0.5\n"},
        {"tone.py": MISBEHAVES},
    )
    (grader,) = load_graders(project / "graders")
    assert isinstance(grader, PythonGrader)
    try:
        started = time.monotonic()
        with pytest.raises(GraderError, match=r"did not return within 0\.5s; it was stopped"):
            _grade(grader, CASE.model_copy(update={"metadata": {"kind": "sleeps"}}), "x")
        assert time.monotonic() - started < 10  # the 30 s sleep was cut short
        assert _grade(grader, CASE.model_copy(update={"metadata": {"kind": "ok"}}), "x")[0] == 1
    finally:
        grader.close()


@pytest.mark.parametrize(
    ("function", "module", "line"),
    [
        ("graders/missing.py:score", None,
         "field 'function': file 'graders/missing.py' not found"),
        ("graders/tone.py:grade", "def score(sample):\n    return 1\n",
         "field 'function': 'graders/tone.py' defines no 'grade' at its top level "
         "(its functions: score)"),
        ("graders/tone.py:score", "def score(sample)\n    return 1\n",
         "field 'function': 'graders/tone.py' line 1: syntax error: expected ':'"),
        ("../outside.py:score", None, "field 'function': '../outside.py' lies outside"),
        ("tone.py", None, "field 'options.function': 'tone.py' is not FILE.py:FUNCTION"),
    ],
)  # fmt: skip
def test_a_bad_function_is_one_line_naming_the_grader_file(
    tmp_path: Path, function: str, module: str | None, line: str
) -> None:
    project = _project(tmp_path, {"tone.yaml": f"type: python\nfunction: {function}\n"}, {})
    (tmp_path / "outside.py").write_text("def score(s):\n    return 1\n", encoding="utf-8")
    if module is not None:
        (project / "graders" / "tone.py").write_text(module, encoding="utf-8")
    with pytest.raises(GraderFileError) as caught:
        read_grader_file(project / "graders" / "tone.yaml")
    message = str(caught.value)
    assert message.startswith(f"{project / 'graders' / 'tone.yaml'}: {line}"), message
    assert "\n" not in message


def test_a_module_that_fails_to_import_is_refused_when_the_grader_is_built(
    tmp_path: Path,
) -> None:
    project = _project(
        tmp_path,
        {"tone.yaml": "type: python\nfunction: tone.py:score\n"},
        {"tone.py": "import no_such_module_here\n\ndef score(sample):\n    return 1\n"},
    )
    with pytest.raises(GraderConfigError) as caught:
        load_graders(project / "graders")
    assert str(caught.value) == (
        f"grader 'tone' ({project / 'graders' / 'tone.yaml'}): importing tone.py failed: "
        "ModuleNotFoundError: No module named 'no_such_module_here' (tone.py line 1)"
    )


def test_python_never_comes_from_text_without_a_project_file() -> None:
    # An upload or inline grader has no file in the project: it cannot be Python.
    with pytest.raises(GraderFileError, match="Python cannot come from an upload"):
        parse_grader({"type": "python", "function": "tone.py:score"}, "upload.yaml", "u", None)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, (1.0, "")), (0, (0.0, "")), (0.25, (0.25, "")),
        ((0.5, "half"), (0.5, "half")), ({"score": 1, "reason": "ok"}, (1.0, "ok")),
        ([False, None], (0.0, "")),
    ],
)  # fmt: skip
def test_every_documented_return_shape_is_read(value: object, expected: tuple[float, str]) -> None:
    assert interpret(value) == expected


@pytest.mark.parametrize(
    "value", [7, -0.1, float("nan"), "0.5", None, (0.5, 3), {"reason": "x"}, (1, 2, 3)]
)
def test_every_other_return_is_refused(value: object) -> None:
    with pytest.raises(ValueError):
        interpret(value)


def test_four_misbehaving_samples_are_four_error_rows_and_the_run_completes(
    home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = _project(
        tmp_path,
        {
            "tone.yaml": "type: python\nfunction: graders/tone.py:score\ntimeout_s: 1\n",
            "overlap.yaml": "type: python\nfunction: graders/overlap.py:score\n",
        },
        {"tone.py": MISBEHAVES, "overlap.py": GOOD},
    )
    cases = tmp_path / "cases.jsonl"
    rows = [
        {"id": kind, "query": "How much is Pro?", "response": "Pro costs $20 monthly",
         "expected_answer": {"text": "Pro costs $20"}, "metadata": {"kind": kind}}
        for kind in ("raises", "seven", "string", "sleeps")
    ]  # fmt: skip
    cases.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code = main(["run", "--home", str(home.home), "--test-set", str(cases), "--name", "py",
                 "--project", str(project), "--graders", "tone,overlap", "--no-ingest",
                 "--workers", "1"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    run_id = out.strip().splitlines()[-1]
    ingest(home)
    found = Warehouse(home.warehouse).sql(
        "SELECT sample_id, grader, score, passed, reason FROM grader_scores "
        "WHERE run_id = $r ORDER BY grader, sample_id",
        {"r": run_id},
    )
    by = {(r["grader"], r["sample_id"]): r for r in found.frame.to_dicts()}
    assert len(by) == 8
    for kind in ("raises", "seven", "string", "sleeps"):
        good = by[("overlap", kind)]
        assert (good["score"], good["passed"]) == (0.75, True)
        assert good["reason"] == "3 words shared with the reference"
        bad = by[("tone", kind)]
        assert (bad["score"], bad["passed"]) == (None, None)
    assert by[("tone", "raises")]["reason"].endswith(
        "raised ValueError: no tone today (tone.py line 7)"
    )
    assert by[("tone", "seven")]["reason"].endswith("returned int 7: the score 7 is outside 0-1")
    assert "returned str 'great'" in by[("tone", "string")]["reason"]
    assert by[("tone", "sleeps")]["reason"].endswith("did not return within 1s; it was stopped")


def test_the_documented_python_grader_runs(tmp_path: Path) -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "judges-and-verifiers.md").read_text(
        encoding="utf-8"
    )
    grader_file = re.search(r"```yaml\n# graders/tone\.yaml\n(.*?)```", doc, re.S)
    module = re.search(r"```python\n# graders/tone\.py\n(.*?)```", doc, re.S)
    assert grader_file is not None and module is not None
    project = _project(tmp_path, {"tone.yaml": grader_file.group(1)}, {"tone.py": module.group(1)})
    (grader,) = load_graders(project / "graders")
    assert isinstance(grader, PythonGrader)
    try:
        assert _grade(grader, CASE, "That is obviously $20.") == (0.0, "rude wording")
        assert _grade(grader, CASE, "Pro costs $20.") == (1.0, "polite")
    finally:
        grader.close()


def test_the_python_of_a_grader_is_part_of_the_project_digest(tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        {"overlap.yaml": "type: python\nfunction: graders/overlap.py:score\n"},
        {"overlap.py": GOOD},
    )
    before = project_digest(project)
    (project / "graders" / "overlap.py").write_text(GOOD + "\n# edited\n", encoding="utf-8")
    # a resume must not grade with edited code
    assert project_digest(project) != before
