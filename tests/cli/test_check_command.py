"""`evalhouse check`: thresholds, regressions against a baseline, exit codes, JUnit."""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from engine.lake import write_part
from engine.settings import Paths
from evalhouse.cli import main
from ingest import ingest
from tests.factories import result_record, run_record


@pytest.fixture
def seeded(home: Paths) -> Paths:
    write_part(home.lake, "runs", "base", 0, [run_record("base")])
    write_part(home.lake, "runs", "new", 0, [run_record("new")])
    write_part(
        home.lake,
        "results",
        "base",
        1,
        [result_record("base", f"s{i}", accuracy=80.0, passed=True) for i in range(4)],
    )
    write_part(
        home.lake,
        "results",
        "new",
        1,
        [
            result_record("new", "s0", accuracy=90.0, passed=True),
            result_record("new", "s1", accuracy=60.0, passed=False),  # regressed by 20
            result_record("new", "s2", accuracy=77.0, passed=True),  # within tolerance 5
            result_record("new", "s3", accuracy=70.0, passed=True),  # regressed by 10
        ],
    )
    ingest(home)
    return home


def _check(home: Paths, *args: str) -> int:
    return main(["check", *args, "--home", str(home.home)])


def test_thresholds_pass_and_fail(seeded: Paths, capsys: pytest.CaptureFixture[str]) -> None:
    # mean accuracy of "new" = (90 + 60 + 77 + 70) / 4 = 74.25; pass rate 0.75
    assert _check(seeded, "new", "--min", "accuracy=74", "--min", "pass_rate=0.75") == 0
    assert "2 passed, 0 failed" in capsys.readouterr().out
    assert _check(seeded, "new", "--min", "accuracy=75") == 1
    out = capsys.readouterr().out
    assert "FAIL  accuracy >= 75 (0-100)" in out and "74.25" in out
    assert _check(seeded, "new", "--max", "error_rate=0") == 0


def test_regressions_against_baseline(seeded: Paths, capsys: pytest.CaptureFixture[str]) -> None:
    assert _check(seeded, "new", "--baseline", "base", "--max-regressions", "2") == 0
    assert _check(seeded, "new", "--baseline", "base", "--max-regressions", "1") == 1
    assert "FAIL  regressions of accuracy <= 1" in capsys.readouterr().out
    # a wider tolerance forgives the 10-point drop
    args = ["--baseline", "base", "--max-regressions", "1", "--tolerance", "15"]
    assert _check(seeded, "new", *args) == 0


def test_junit_report_parses_back(seeded: Paths, tmp_path: Path) -> None:
    report = tmp_path / "gate.xml"
    code = _check(
        seeded,
        "new",
        "--min",
        "accuracy=75",
        "--min",
        "completeness=50",
        "--format",
        "junit",
        "--output",
        str(report),
    )
    assert code == 1
    suite = ET.parse(report).getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures")) == ("2", "1")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    failure = cases["accuracy >= 75 (0-100)"].find("failure")
    assert failure is not None and "74.25" in (failure.get("message") or "")
    assert cases["completeness >= 50 (0-100)"].find("failure") is None


def test_bad_usage_exits_2(seeded: Paths, capsys: pytest.CaptureFixture[str]) -> None:
    assert _check(seeded, "nope", "--min", "accuracy=1") == 2
    assert "not in the warehouse" in capsys.readouterr().err
    assert _check(seeded, "new", "--min", "accuracy>1") == 2
    assert "METRIC=NUMBER" in capsys.readouterr().err
    assert _check(seeded, "new", "--max-regressions", "1") == 2


def test_unknown_metric_fails_with_the_known_ones(
    seeded: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _check(seeded, "new", "--min", "grader:tone=0.5") == 1
    assert "FAIL" in capsys.readouterr().out


def test_an_unknown_metric_is_a_usage_error_naming_the_known_ones(
    seeded: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _check(seeded, "new", "--min", "bogus=1") == 2
    err = capsys.readouterr().err
    assert "unknown metric 'bogus'" in err and "accuracy" in err and "judge_faithfulness" in err
    # a known metric this run has no value for is a quality failure, not a usage error
    assert _check(seeded, "new", "--min", "judge_faithfulness=3") == 1


def test_baseline_alone_gates_regressions_and_nothing_to_check_is_refused(
    seeded: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _check(seeded, "new", "--baseline", "base") == 1  # s1 and s3 fell beyond 5 points
    assert "regress" in capsys.readouterr().out.lower()
    assert _check(seeded, "new", "--baseline", "base", "--tolerance", "25") == 0
    assert _check(seeded, "new") == 2
    assert "nothing to check" in capsys.readouterr().err
