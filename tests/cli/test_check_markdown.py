"""``check --format markdown``: a pull-request comment that renders as tables, names every
failing threshold, and keeps a hostile sample id inside its cell; the documented GitHub
Actions Gate step run as written against a fake Actions environment."""

from __future__ import annotations

import html
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from markdown_it import MarkdownIt

from engine.gate import GateCheck
from engine.gate_markdown import cell, render_markdown
from engine.lake import write_part
from engine.models import GraderScoreRecord
from engine.settings import Paths
from evalhouse.cli import main
from ingest import ingest
from tests.factories import result_record, run_record

DOC = Path(__file__).resolve().parents[2] / "docs" / "ci-gate.md"
HOSTILE = "s|1\nnext *bold* <b>"
"""A sample id with a table separator, a line break, emphasis and HTML."""

# new: accuracy 40 and 90 and an error row: mean 65 < 70; error_rate 2 of 3 (the error
# and the grader failure on HOSTILE) > 0.05; grader:tone 0.9 (the null is a failure, not
# a zero) >= 0.8.
FAILING = ["accuracy >= 70 (0-100)", "error_rate <= 0.05 (0-1)"]
PASSING = ["grader:tone >= 0.8 (0-1)"]


def _grader_row(sample_id: str, score: float | None, reason: str) -> GraderScoreRecord:
    return GraderScoreRecord(
        run_id="new", iteration=1, sample_id=sample_id, candidate="", grader="tone",
        score=score, passed=None if score is None else score >= 0.8, reason=reason, weight=1.0,
    )  # fmt: skip


@pytest.fixture
def pair(home: Paths) -> Paths:
    """Runs ``base`` (accuracy 80 everywhere) and ``new`` (one sample down 40, one failed,
    a grader failure on the sample with the hostile id)."""
    ids = [HOSTILE, "s2", "s*3"]
    write_part(home.lake, "runs", "base", 0, [run_record("base")])
    write_part(home.lake, "runs", "new", 0, [run_record("new")])
    write_part(home.lake, "results", "base", 1, [result_record("base", s) for s in ids])
    new = [
        result_record("new", HOSTILE, accuracy=40.0),
        result_record("new", "s2", accuracy=90.0),
        result_record(
            "new", "s*3", accuracy=None, completeness=None, attribution=None,
            error="target timed out | after 30 s",
        ),
    ]  # fmt: skip
    grades = [
        _grader_row(HOSTILE, None, "tone.py:score raised ValueError: no | tone"),
        _grader_row("s2", 0.9, "polite"),
        _grader_row("s*3", None, "the sample failed"),
    ]
    # as a run writes them: the detail part first, then the results part that publishes it
    write_part(home.lake, "grader_scores", "new", 1, grades)
    write_part(home.lake, "results", "new", 1, new)
    ingest(home)
    return home


def _gate_step() -> str:
    """The Gate step's command of the documented workflow, as written."""
    block = re.search(r"```yaml\n(# \.github/workflows/evals\.yml\n.*?)```", DOC.read_text(), re.S)
    assert block is not None, "the workflow example is missing from docs/ci-gate.md"
    workflow = yaml.safe_load(block.group(1))
    steps = workflow["jobs"]["evals"]["steps"]
    (gate,) = [s for s in steps if s.get("name") == "Gate"]
    return str(gate["run"])


def _tables(markdown: str) -> list[list[list[str]]]:
    """Each table the renderer produced, as rows of cell texts (header row first)."""
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    tables: list[list[list[str]]] = []
    inside = False
    for token in tokens:
        if token.type in ("table_open", "table_close"):
            inside = token.type == "table_open"
            if inside:
                tables.append([])
        elif token.type == "tr_open":
            tables[-1].append([])
        elif token.type == "inline" and inside:
            tables[-1][-1].append(_text(token.children or []))
    return tables


def _text(children: list[Any]) -> str:
    return "".join(c.content for c in children if c.type in ("text", "code_inline", "softbreak"))


def _rendered_text(markdown: str) -> str:
    rendered = MarkdownIt("commonmark").enable("table").render(markdown)
    return html.unescape(re.sub(r"<[^>]+>", "", rendered))


def test_the_documented_gate_step_comments_and_fills_the_job_summary(
    pair: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = tmp_path / "step_summary.md"
    summary.write_text("## earlier step\n\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("BASELINE_RUN", "base")
    monkeypatch.chdir(tmp_path)
    command = _gate_step().replace("${{ steps.evaluate.outputs.run }}", "new")
    argv = [re.sub(r"\$BASELINE_RUN", "base", a) for a in shlex.split(command)]
    assert argv[:2] == ["evalhouse", "check"]
    code = main([*argv[1:], "--home", str(pair.home)])
    err = capsys.readouterr().err
    assert code == 1, err
    comment = (tmp_path / "evalhouse-check.md").read_text(encoding="utf-8")
    job_summary = summary.read_text(encoding="utf-8")
    assert job_summary == "## earlier step\n\n" + comment + "\n"  # appended, not replaced
    assert "Markdown summary appended to" in err
    for markdown in (comment, job_summary.removeprefix("## earlier step\n\n")):
        tables = _tables(markdown)
        assert len(tables) == 3  # checks, regressions, worst samples
        for table in tables:  # no row gained or lost a column to the hostile id
            assert len({len(row) for row in table}) == 1, table
        text = _rendered_text(markdown)
        first = text.strip().splitlines()[0]
        assert first.startswith("❌ evalhouse check failed: 2 of 3 checks failed for run new")
        checks = {row[1]: row[0] for row in tables[0][1:]}
        for name in FAILING:
            assert checks[name] == "❌ FAIL", checks
            assert f"Failing: {FAILING[0]}; {FAILING[1]}" in text
        for name in PASSING:
            assert checks[name] == "✅ pass"
        regressions = {row[0]: row[1:] for row in tables[1][1:]}
        # the mean change (-15 on 2 paired samples) has no interval under 5 pairs
        assert regressions["accuracy"] == [
            "1",
            "not gated",
            "-15.0 points, too few paired samples (2)",
        ]
        worst = tables[2][1:]
        # the failed sample first, then the one a grader failed on, then the rest
        assert [row[0] for row in worst] == ["s*3", "s|1 next *bold* <b>", "s2"]
        assert worst[0][2] == "1 error, 1 grader failure"
        assert worst[0][5] == "target timed out | after 30 s"
        assert worst[1][5] == "tone: tone.py:score raised ValueError: no | tone"


def test_markdown_goes_to_standard_output_and_the_table_to_the_person(
    pair: Paths, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    code = main(["check", "new", "--min", "grader:tone=0.8", "--format", "markdown",
                 "--home", str(pair.home)])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert out.startswith("### ✅ evalhouse check passed: all 1 checks for run new\n")
    assert "Regressions" not in out  # no baseline, no regression section
    assert "1 passed, 0 failed" in err and "1 passed, 0 failed" not in out


def test_any_format_appends_the_summary_when_actions_asks(
    pair: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code = main(["check", "new", "--min", "accuracy=70", "--home", str(pair.home)])
    out, _ = capsys.readouterr()
    assert code == 1
    assert out.startswith("      check")  # the table, as without Actions
    assert "| ❌ **FAIL** | accuracy \\>= 70 \\(0-100\\) | 65 |" in summary.read_text()


def test_an_unwritable_step_summary_is_one_line(
    pair: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "no-such-folder" / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(target))
    code = main(["check", "new", "--min", "accuracy=70", "--home", str(pair.home)])
    err = capsys.readouterr().err
    assert code == 2
    assert err == (
        f"error: GITHUB_STEP_SUMMARY={target}: cannot append the summary: "
        "No such file or directory\n"
    )


def test_every_data_string_is_escaped() -> None:
    assert cell("a|b\nc*d_e<f>`g`[h](i) $x$ &amp;") == (
        r"a\|b c\*d\_e\<f\>\`g\`\[h\]\(i\) \$x\$ \&amp;"
    )
    assert cell("x" * 10, limit=5) == "xxxx…"
    checks = [GateCheck("grader:a|b >= 0.5 (0-1)", False, 0.25, 0.5, "grader 'a|b'\nfailed")]
    markdown = render_markdown(checks, run_id="run|1\n<script>")
    (table,) = _tables(markdown)
    assert table[1] == ["❌ FAIL", "grader:a|b >= 0.5 (0-1)", "0.25", "grader 'a|b' failed"]
    assert "<script>" not in MarkdownIt("commonmark").enable("table").render(markdown)
