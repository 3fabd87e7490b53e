"""Hostile test-set files: each is refused in one line (exit 2) or its bad rows are skipped
with ``file:line: reason``; nothing reaches the lake."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine.settings import Paths
from tests.hostile.conftest import (
    GOOD_CASE,
    assert_clean_skip,
    assert_refused,
    cli,
    lake_parts,
)

DEEP = "[" * 100_000 + "]" * 100_000
MID = "[" * 500 + "]" * 500  # parses, but deeper than any real test set

REFUSED: dict[str, tuple[str, bytes, str]] = {
    # id: (file name, content, piece of the one-line message)
    "empty": ("t.jsonl", b"", "empty file"),
    "blank-lines": ("t.jsonl", b"\n\n  \n", "empty file"),
    "bom-only": ("t.jsonl", b"\xef\xbb\xbf", "empty file"),
    "utf16": ("t.jsonl", "\ufeff{}".encode("utf-16"), "UTF-16"),
    "latin1": ("t.jsonl", b'{"id": "a", "query": "caf\xe9"}\n', "not UTF-8"),
    "binary": ("t.jsonl", bytes(range(256)) * 4, "not UTF-8"),
    "nul-bytes": ("t.jsonl", b"\x00" * 64, "t.jsonl"),
    "deep-json-array": ("t.json", f'[{{"id": "a", "query": "q", "m": {DEEP}}}]'.encode(), "deep"),
    "deep-json-doc": ("t.json", DEEP.encode(), "deep"),
    "json-scalar": ("t.json", b'"hello"', "got str"),
    "json-null": ("t.json", b"null", "got NoneType"),
    "json-number": ("t.json", b"42", "got int"),
    "json-empty-array": ("t.json", b"[]", "empty test set"),
    "json-empty-object": ("t.json", b"{}", "testCases"),
    "json-testcases-not-list": ("t.json", b'{"testCases": 3}', "must be an array"),
    "json-truncated": ("t.json", b'[{"id": "a", "query": "q"', "invalid JSON"),
    "json-trailing-garbage": ("t.json", b'[{"id": "a", "query": "q"}] xx', "invalid JSON"),
    "json-array-of-scalars": ("t.json", b"[1, 2, 3]", "expected an object"),
    "jsonl-all-arrays": ("t.jsonl", b"[1]\n[2]\n", "expected a JSON object"),
    "jsonl-all-deep": ("t.jsonl", f'{{"id": "a", "query": "q", "m": {DEEP}}}\n'.encode(), "deep"),
    "jsonl-only-bad-json": ("t.jsonl", b"{nope}\n", "invalid JSON"),
    "unknown-extension": ("t.txt", b"hello world\n", "unknown test-set format"),
    "yaml-invalid": ("t.yaml", b"tests: [a, b\n", "invalid YAML"),
    "yaml-scalar": ("t.yaml", b"just text\n", "no question var"),
    "yaml-no-tests": ("t.yaml", b"prompts: [x]\n", "needs a 'tests:' list"),
    "yaml-tests-empty": ("t.yaml", b"tests: []\n", "non-empty list"),
    "yaml-deep": ("t.yaml", ("tests: " + "[" * 5000 + "]" * 5000 + "\n").encode(), "deep"),
    "yaml-billion-laughs": (
        "t.yaml",
        (
            "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
            + "".join(
                f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n"
                for i in range(8)
            )
            + "tests: [*i]\n"
        ).encode(),
        "expands to over",
    ),
    "yaml-self-reference": ("t.yaml", b"tests: &t [*t]\n", "t.yaml"),
    "csv-header-only": ("t.csv", b"input,expected_output\n", "no data rows"),
    "csv-duplicate-column": ("t.csv", b"input,input\na,b\n", "duplicate column"),
    "csv-unknown-header": ("t.csv", b"foo,bar\n1,2\n", "unknown CSV format"),
    "csv-bad-quote-only-row": ("t.csv", b'input,expected_output\n"a,b\n', "unreadable CSV row"),
    "csv-empty": ("t.csv", b"", "empty file"),
    "missing-query-everywhere": ("t.jsonl", b'{"id": "a"}\n{"id": "b"}\n', "query"),
}


@pytest.mark.parametrize("case", sorted(REFUSED), ids=str)
def test_bad_file_is_refused_in_one_line(
    case: str, home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name, content, mentions = REFUSED[case]
    path = tmp_path / name
    path.write_bytes(content)
    outcome = cli(capsys, "run", "--test-set", str(path), "--name", "h", "--home", str(home.home))
    line = assert_refused(outcome, mentions=name)
    assert mentions in outcome.err, (line, outcome.err)
    assert lake_parts(home) == [] and not home.warehouse.exists()


def _special(tmp_path: Path, kind: str) -> str:
    if kind == "dev-zero":
        return "/dev/zero"
    if kind == "dev-null":
        return "/dev/null"
    if kind == "fifo":
        fifo = tmp_path / "cases.jsonl"
        os.mkfifo(fifo)  # no writer: a plain open() would block forever
        return str(fifo)
    if kind == "folder":
        (tmp_path / "cases.jsonl").mkdir()
        return str(tmp_path / "cases.jsonl")
    if kind == "missing":
        return str(tmp_path / "absent.jsonl")
    if kind == "symlink-to-zero":
        (tmp_path / "z.jsonl").symlink_to("/dev/zero")
        return str(tmp_path / "z.jsonl")
    if kind == "dangling-symlink":
        (tmp_path / "d.jsonl").symlink_to(tmp_path / "nowhere")
        return str(tmp_path / "d.jsonl")
    assert kind == "sparse-huge"
    big = tmp_path / "big.jsonl"
    with big.open("wb") as handle:
        handle.truncate(600 * 1024 * 1024)  # sparse: costs no disk, refused by its size
    return str(big)


@pytest.mark.parametrize(
    "kind",
    [
        "dev-zero",
        "dev-null",
        "fifo",
        "folder",
        "missing",
        "symlink-to-zero",
        "dangling-symlink",
        "sparse-huge",
    ],
)
def test_non_regular_or_huge_file_is_refused_without_reading_it(
    kind: str, home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _special(tmp_path, kind)
    outcome = cli(capsys, "run", "--test-set", path, "--name", "h", "--home", str(home.home))
    assert_refused(outcome, mentions=path)
    assert lake_parts(home) == []


SKIPPED: dict[str, tuple[str, str]] = {
    # id: (bad row of a JSONL file whose other row is GOOD_CASE, piece of the reason)
    "deep-row": (f'{{"id": "a", "query": "q", "metadata": {{"x": {DEEP}}}}}', "deep"),
    "deep-but-parsable": (f'{{"id": "a", "query": "q", "metadata": {{"x": {MID}}}}}', "deep"),
    "duplicate-claim-ids": (
        '{"id": "a", "query": "q", "expected_answer": {"claims": [{"id": "c1", "text": "x"}, '
        '{"id": "c1", "text": "y"}]}}',
        "duplicate claim id 'c1'",
    ),
    "duplicate-case-id": (GOOD_CASE, "duplicate id 'q1'"),
    "bad-json": ('{"id": "a", "query": ', "invalid JSON"),
    "array-line": ("[1, 2]", "expected a JSON object"),
    "number-line": ("7", "expected a JSON object"),
    "null-line": ("null", "expected a JSON object"),
    "empty-id": ('{"id": "", "query": "q"}', "id"),
    "newline-in-id": ('{"id": "a\\nb", "query": "q"}', "control characters"),
    "escape-in-id": ('{"id": "\\u001b[2J", "query": "q"}', "control characters"),
    "nul-in-id": ('{"id": "a\\u0000", "query": "q"}', "control characters"),
    "lone-surrogate": ('{"id": "a", "query": "\\ud800"}', "query"),
    "empty-query": ('{"id": "a", "query": ""}', "query"),
    "null-query": ('{"id": "a", "query": null}', "query"),
    "query-number": ('{"id": "a", "query": 5}', "query"),
    "unknown-field": ('{"id": "a", "query": "q", "answer": "x"}', "answer"),
    "bad-importance": (
        '{"id": "a", "query": "q", "expected_answer": {"claims": [{"id": "c", "text": "t", '
        '"importance": "vital"}]}}',
        "importance",
    ),
    "claims-not-list": ('{"id": "a", "query": "q", "expected_answer": {"claims": 3}}', "claims"),
    "empty-claim-text": (
        '{"id": "a", "query": "q", "expected_answer": {"claims": [{"id": "c", "text": ""}]}}',
        "text",
    ),
    "ground-truth-string": ('{"id": "a", "query": "q", "ground_truth": "x"}', "ground_truth"),
    "metadata-list": ('{"id": "a", "query": "q", "metadata": [1]}', "metadata"),
    "tags-number": ('{"id": "a", "query": "q", "tags": 5}', "tags"),
    "huge-row": ('{"id": "a", "query": "' + "x" * 1_100_000 + '"}', "byte limit per row"),
}


@pytest.mark.parametrize("case", sorted(SKIPPED), ids=str)
def test_bad_row_is_skipped_with_file_line_reason(
    case: str, home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad, mentions = SKIPPED[case]
    path = tmp_path / "cases.jsonl"
    path.write_text(f"{GOOD_CASE}\n{bad}\n", encoding="utf-8")
    outcome = cli(
        capsys,
        "run",
        "--test-set",
        str(path),
        "--name",
        "h",
        "--estimate",
        "--home",
        str(home.home),
    )
    assert_clean_skip(outcome, 1, mentions=mentions)
    assert f"{path}:2: " in outcome.err and "1 cases" in outcome.err
    assert lake_parts(home) == []


def test_deep_json_in_a_csv_cell_is_a_skipped_row(
    home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cases.csv"
    path.write_text(
        f'input,expected_output,metadata\nq1,a1,{{}}\nq2,a2,"{{""x"": {DEEP}}}"\n',
        encoding="utf-8",
    )
    outcome = cli(
        capsys,
        "run",
        "--test-set",
        str(path),
        "--name",
        "h",
        "--estimate",
        "--home",
        str(home.home),
    )
    assert_clean_skip(outcome, 1, mentions="metadata")


def test_promptfoo_file_reference_to_a_device_is_refused(
    home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "z.csv").symlink_to("/dev/zero")
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text("prompts: ['{{question}}']\ntests: file://z.csv\n", encoding="utf-8")
    outcome = cli(capsys, "run", "--test-set", str(path), "--name", "h", "--home", str(home.home))
    assert_refused(outcome, mentions="not a regular file")
