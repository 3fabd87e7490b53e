"""One-line messages stay one line and never drive the terminal: control characters in a
path or a ``--map`` key are escaped, and ``--map`` refuses to drop a column silently."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.errors import InputError, printable
from engine.settings import Paths
from tests.hostile.conftest import assert_refused, cli


def test_printable_escapes_terminal_controls_and_keeps_newlines() -> None:
    assert printable("a\x1b[2Jb\rc\x00d\x9be\nf") == "a\\x1b[2Jb\\x0dc\\x00d\\x9be\nf"
    assert str(InputError("file \x1b]0;pwned\x07")) == "file \\x1b]0;pwned\\x07"


def test_an_escape_sequence_in_a_path_is_echoed_escaped(
    home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "a\x1b[2Jb.jsonl"
    outcome = cli(capsys, "run", "--test-set", str(path), "--name", "h", "--home", str(home.home))
    line = assert_refused(outcome)
    assert "\x1b" not in outcome.err and "a\\x1b[2Jb.jsonl" in line


@pytest.mark.parametrize(
    ("maps", "mentions"),
    [
        (["question=query", "answer=query"], "sends both 'question' and 'answer' to 'query'"),
        (["question=query"], "already has a 'query' column"),
    ],
)
def test_map_refuses_to_drop_a_column(
    maps: list[str],
    mentions: str,
    home: Paths,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "t.csv"
    header = "question,answer" if len(maps) == 2 else "question,query"
    path.write_text(f"{header}\nq1,a1\n", encoding="utf-8")
    flags = [arg for m in maps for arg in ("--map", m)]
    outcome = cli(
        capsys, "run", "--test-set", str(path), "--name", "h", *flags, "--home", str(home.home)
    )
    assert mentions in assert_refused(outcome, mentions=str(path))


def test_map_key_with_controls_is_escaped(
    home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.csv"
    path.write_text("question\nq1\n", encoding="utf-8")
    outcome = cli(
        capsys, "run", "--test-set", str(path), "--name", "h", "--map", "q\x1b[2J=query",
        "--home", str(home.home),
    )  # fmt: skip
    assert_refused(outcome)
    assert "\x1b" not in outcome.err


@pytest.mark.parametrize(
    "args",
    [
        ["inspect", "missing\nerror: forged.jsonl"],
        ["run", "--test-set", "missing\nerror: forged.jsonl", "--name", "h", "--estimate"],
        ["run", "--test-set", "{cases}", "--name", "h", "--config", "c\nforged.yaml"],
        ["run", "--test-set", "{cases}", "--name", "h", "--map", "qu\nery=query", "--estimate"],
        ["inspect", "{header}"],
    ],
)
def test_a_line_break_in_a_path_or_column_stays_inside_the_one_line(
    args: list[str], home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"id": "a", "query": "q", "expected_answer": {"text": "x"}}\n')
    header = tmp_path / "cols.csv"
    header.write_text('"ques\ntion",answer\nhi,there\n')
    filled = [a.replace("{cases}", str(cases)).replace("{header}", str(header)) for a in args]
    if filled[0] == "run":
        filled += ["--home", str(home.home)]
    outcome = cli(capsys, *filled)
    line = assert_refused(outcome)
    assert "\\n" in line and "\n" not in outcome.err.strip()
