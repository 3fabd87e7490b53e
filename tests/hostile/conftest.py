"""Shared helpers of the hostile input suite: run the CLI in-process, check a refusal.

A refusal is exit code 2, exactly one line on standard error, no traceback anywhere, and
nothing half-written: no lake part, no warehouse row and no warehouse file that was not
there before. A clean skip is exit 0 with one ``file:line: reason`` line per skipped row.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from engine.lake import write_part
from engine.settings import Paths
from evalhouse.cli import main
from ingest import ingest
from tests.factories import result_record, run_record

GOOD_CASE = (
    '{"id": "q1", "domain": "acme.com", "query": "How much is Pro?", "response": "Pro is '
    '$49 a month.", "expected_answer": {"text": "Pro costs $49 a month.", "claims": '
    '[{"id": "c1", "text": "Pro costs $49 a month."}]}}'
)
"""One valid native case (the DESIGN.md test-set format), for files that mix good and bad."""

ROW_PROBLEMS = re.compile(r": (\d+) problem\(s\)$")
SKIP_LINE = re.compile(r"^skipped: .+:\d+: \S.*$")


@dataclass(frozen=True)
class Outcome:
    """What one CLI call did."""

    code: int
    out: str
    err: str

    @property
    def err_lines(self) -> list[str]:
        """Non-empty lines of standard error."""
        return [line for line in self.err.splitlines() if line.strip()]


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> Outcome:
    """``evalhouse ARGV`` in this process (fast), with what it printed."""
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return Outcome(code, captured.out, captured.err)


def assert_refused(outcome: Outcome, *, mentions: str | None = None, code: int = 2) -> str:
    """Exit ``code`` (2: a mistake; 3: the warehouse is unavailable), one line on standard
    error (naming ``mentions`` when given), no traceback; returns the line."""
    assert "Traceback" not in outcome.out + outcome.err
    assert outcome.code == code, (outcome.code, outcome.err, outcome.out[-500:])
    lines = outcome.err_lines
    rows = ROW_PROBLEMS.search(lines[0]) if lines else None
    if rows:  # a file whose every row is bad: the head line, then one line per row
        count = int(rows.group(1))
        listed = lines[1 : 1 + min(count, 20)]
        assert len(lines) == 1 + len(listed) + (count > 20), outcome.err
        assert all(re.match(r"^\s+\S.*:\d+: \S", line) for line in listed), listed
    else:
        assert len(lines) == 1, outcome.err
    if mentions is not None:
        assert mentions in lines[0], lines[0]
    return lines[0]


def assert_clean_skip(outcome: Outcome, skipped: int, *, mentions: str | None = None) -> None:
    """Exit 0 with exactly ``skipped`` ``skipped: file:line: reason`` lines, no traceback."""
    assert "Traceback" not in outcome.out + outcome.err
    assert outcome.code == 0, outcome.err
    lines = [line for line in outcome.err_lines if line.startswith("skipped:")]
    assert len(lines) == skipped, outcome.err
    assert all(SKIP_LINE.match(line) for line in lines), lines
    if mentions is not None:
        assert any(mentions in line for line in lines), lines


def lake_parts(paths: Paths) -> list[Path]:
    """Every Parquet file under the lake."""
    return sorted(paths.lake.rglob("*.parquet")) if paths.lake.exists() else []


def fingerprint(paths: Paths) -> tuple[str, tuple[str, ...]]:
    """The warehouse file's hash and the lake's file names: equal before and after a
    refusal means nothing was written."""
    db = paths.warehouse
    digest = hashlib.sha256(db.read_bytes()).hexdigest() if db.is_file() else "absent"
    files = tuple(str(p.relative_to(paths.home)) for p in lake_parts(paths))
    return digest, files


@pytest.fixture
def seeded(home: Paths) -> Paths:
    """A home with run ``R`` (two samples) in the lake and the warehouse."""
    write_part(home.lake, "runs", "R", 0, [run_record("R")])
    write_part(home.lake, "results", "R", 1, [result_record("R", "s1"), result_record("R", "s2")])
    ingest(home)
    return home
