"""`evalhouse check` as a CI gate that cannot mislead: thresholds on their metric's scale,
regressions counted per metric by the Compare page's own query, grader failures as errors,
and an unavailable warehouse told apart from a mistake by its exit code."""

from __future__ import annotations

import re

import pytest

from engine.gate import GateSpecError, Threshold, check_scales, evaluate_gate
from engine.lake import write_part
from engine.models import GraderScoreRecord, ResultRecord
from engine.models.metrics import CONVERSATION_METRICS, CONVERSATION_PREFIX, GATE_METRICS
from engine.settings import Paths
from evalhouse.cli import main
from ingest import ingest
from tests.factories import result_record, run_record
from warehouse import queries as q
from warehouse.queries import Warehouse

BASE = {"accuracy": 80.0, "completeness": 60.0, "attribution": 75.0, "judge_faithfulness": 4.0}
NEW = {
    "s0": {"accuracy": 60.0},  # accuracy down 20
    "s1": {"completeness": 40.0},  # completeness down 20
    "s2": {"attribution": 65.0},  # attribution down 10
    "s3": {"accuracy": 77.0, "completeness": 57.0},  # within the tolerance of 5
    "s4": {"accuracy": 74.0, "completeness": 30.0},  # both down
    "s5": {"judge_faithfulness": 3.0},  # the judge's 1-5 score down 1 = 25 points of 0-100
}


def _result(run_id: str, sample_id: str, **over: float) -> ResultRecord:
    fields = {**BASE, **over}
    return result_record(
        run_id,
        sample_id,
        judge_completeness=4.0,
        passed=fields["judge_faithfulness"] >= 4,
        **fields,
    )


@pytest.fixture
def pair(home: Paths) -> Paths:
    """Runs ``base`` and ``new`` whose samples regress on different metrics."""
    write_part(home.lake, "runs", "base", 0, [run_record("base")])
    write_part(home.lake, "runs", "new", 0, [run_record("new")])
    write_part(home.lake, "results", "base", 1, [_result("base", s) for s in NEW])
    write_part(home.lake, "results", "new", 1, [_result("new", s, **o) for s, o in NEW.items()])
    ingest(home)
    return home


def _check(home: Paths, *args: str) -> int:
    return main(["check", *args, "--home", str(home.home)])


def _regressed(table: str) -> dict[str, int]:
    """metric -> regressed samples, read from check's table."""
    found = re.findall(r"regressions of (\S+) <= \d+ \(.*\)\s+(\d+)$", table, flags=re.M)
    return {metric: int(n) for metric, n in found}


def test_check_counts_regressions_as_the_compare_page_does(
    pair: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    wh = Warehouse(pair.warehouse)
    metrics = ["accuracy", "completeness", "attribution", "judge_faithfulness"]
    args = [f"--regression-metric={m}" for m in metrics]
    assert _check(pair, "new", "--baseline", "base", *args) == 1
    counted = _regressed(capsys.readouterr().out)
    compare = {
        m: int(q.compare_counts(wh, "new", "base", metric=m, tolerance=5.0)["regressed"].sum())
        for m in metrics
    }
    assert (
        counted
        == compare
        == {
            "accuracy": 2,
            "completeness": 2,
            "attribution": 1,
            "judge_faithfulness": 1,
        }
    )
    # a wider tolerance moves both the same way
    assert _check(pair, "new", "--baseline", "base", "--tolerance", "15", *args) == 1
    wide = _regressed(capsys.readouterr().out)
    assert wide == {
        m: int(q.compare_counts(wh, "new", "base", metric=m, tolerance=15.0)["regressed"].sum())
        for m in metrics
    }
    assert wide["attribution"] == 0 and wide["accuracy"] == 1


def test_baseline_alone_names_each_regressed_metric(
    pair: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _check(pair, "new", "--baseline", "base") == 1
    out = capsys.readouterr().out
    # one line per analyzer metric, not one count of samples that fell on any of them
    assert _regressed(out) == {"accuracy": 2, "completeness": 2, "attribution": 1}
    assert "FAIL  regressions of accuracy <= 0 (samples down > 5 points of 0-100)" in out
    assert _check(pair, "new", "--baseline", "base", "--max-regressions", "2") == 0


def test_an_unknown_regression_metric_is_a_usage_error(
    pair: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _check(pair, "new", "--baseline", "base", "--regression-metric", "bogus") == 2
    err = capsys.readouterr().err
    assert "--regression-metric 'bogus'" in err and "judge_faithfulness" in err
    assert _check(pair, "new", "--regression-metric", "accuracy", "--min", "accuracy=1") == 2


@pytest.mark.parametrize(
    ("flag", "scale"),
    [
        ("--min=pass_rate=75", "0-1"),  # a share written as a percentage
        ("--min=judge_faithfulness=0.8", "1-5"),  # a 0-1 value on the rubric
        ("--max=accuracy=150", "0-100"),
        ("--max=error_rate=5", "0-1"),
        ("--min=grader:tone=70", "0-1"),
        ("--max=cost_usd=-1", "USD"),
    ],
)
def test_a_threshold_off_its_metric_scale_is_refused(
    flag: str, scale: str, pair: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _check(pair, "new", flag) == 2
    err = capsys.readouterr().err
    kind, metric_value = flag.split("=", 1)
    metric = metric_value.split("=")[0]
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{kind} {metric}=" in err and f"the {scale} scale" in err and "outside" in err


def test_every_threshold_shows_its_scale(pair: Paths, capsys: pytest.CaptureFixture[str]) -> None:
    code = _check(
        pair,
        "new",
        "--min=accuracy=60",
        "--min=pass_rate=0.5",
        "--min=judge_faithfulness=3",
        "--max=cost_usd=10",
        "--min=samples=6",
    )
    out = capsys.readouterr().out
    assert code == 0, out
    for name in (
        "accuracy >= 60 (0-100)",
        "pass_rate >= 0.5 (0-1)",
        "judge_faithfulness >= 3 (1-5)",
        "cost_usd <= 10 (USD)",
        "samples >= 6 (count)",
    ):
        assert f"ok    {name}" in out


def test_a_0_100_threshold_of_one_or_less_warns(
    pair: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _check(pair, "new", "--min", "accuracy=0.7") == 0
    err = capsys.readouterr().err
    assert "warning: --min accuracy=0.7" in err and "accuracy=70" in err


def test_check_scales_is_pure() -> None:
    assert check_scales([Threshold("accuracy", 70.0), Threshold("pass_rate", 0.9)]) == []
    with pytest.raises(GateSpecError, match="the 1-5 scale"):
        check_scales([Threshold("rag_overall", 0.0)])
    (warning,) = check_scales([Threshold("completeness", 1.0, "max")])
    assert warning.startswith("warning: --max completeness=1:")
    checks = evaluate_gate({"error_rate": 0.25}, [Threshold("error_rate", 0.0, "max")])
    assert checks[0].name == "error_rate <= 0 (0-1)" and not checks[0].passed


def test_every_gate_metric_has_a_value_row(pair: Paths) -> None:
    """``check_metrics`` lists exactly the catalogue's gate metrics (one home of the list)."""
    got = q.check_metrics(Warehouse(pair.warehouse), "new")
    assert set(got) == set(GATE_METRICS)
    assert got["pass_rate"] == pytest.approx(5 / 6)  # a 0-1 share, as in run_summary
    summary = Warehouse(pair.warehouse).sql(
        "SELECT pass_rate FROM run_summary WHERE run_id = 'new'"
    )
    assert summary.frame.item() == pytest.approx(got["pass_rate"])
    sql = q.sql_file("check_metrics")
    assert all(f"avg({m}) AS {m}" in sql for m in CONVERSATION_METRICS)
    assert f"'{CONVERSATION_PREFIX}' || metric" in sql


# ----------------------------------------------------------------------------- graders


@pytest.fixture
def broken_grader(home: Paths) -> Paths:
    """A run whose samples all scored, with a grader ``tone`` that failed on every one and
    a grader ``cites`` that worked."""
    write_part(home.lake, "runs", "g", 0, [run_record("g")])
    rows = [
        GraderScoreRecord(
            run_id="g",
            iteration=1,
            sample_id=f"s{i}",
            grader=grader,
            score=score,
            passed=None if score is None else True,
            reason="grader 'tone' failed: judge timed out" if score is None else "ok",
        )
        for i in range(4)
        for grader, score in (("tone", None), ("cites", 1.0))
    ]
    # as a run writes them: a detail table's part first, the results part that publishes it
    write_part(home.lake, "grader_scores", "g", 1, rows)
    write_part(home.lake, "results", "g", 1, [result_record("g", f"s{i}") for i in range(4)])
    ingest(home)
    return home


def test_a_grader_that_failed_on_everything_counts_as_errors(
    broken_grader: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _check(broken_grader, "g", "--max", "error_rate=0") == 1
    out = capsys.readouterr().out
    assert re.search(r"^FAIL  error_rate <= 0 \(0-1\)\s+1$", out, re.M), out
    report = broken_grader.home / "gate.xml"
    args = ["--max", "error_rate=0", "--min", "grader:tone=0.5", "--format", "junit"]
    assert _check(broken_grader, "g", *args, "--output", str(report)) == 1
    xml = report.read_text(encoding="utf-8")
    assert "grader failures count as errors: 'tone' on 4 of 4" in xml
    assert "grader 'tone' failed on every result" in xml
    # the grader summary says the same: every result of tone is an error
    frame = (
        Warehouse(broken_grader.warehouse)
        .sql(
            "SELECT grader, results, errors FROM grader_summary WHERE run_id = 'g' ORDER BY grader"
        )
        .frame
    )
    assert frame.rows() == [("cites", 4, 0), ("tone", 4, 4)]
    # a grader that works leaves the error rate alone
    assert _check(broken_grader, "g", "--min", "grader:cites=1") == 0


# ----------------------------------------------------------------------------- exit codes


def test_a_missing_warehouse_exits_3_for_check_and_sql(
    home: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    for args in (["check", "r1", "--min", "accuracy=70"], ["sql", "SELECT 1"]):
        assert main([*args, "--home", str(home.home)]) == 3
        err = capsys.readouterr().err
        assert err.startswith("No warehouse yet: ") and err.count("\n") == 1, err
        assert "evalhouse demo" in err


def test_a_corrupt_warehouse_exits_3_for_check_and_sql(
    home: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    home.warehouse.parent.mkdir(parents=True, exist_ok=True)
    home.warehouse.write_bytes(b"this is no DuckDB file\n" * 200)
    for args in (["check", "r1", "--min", "accuracy=70"], ["sql", "SELECT 1"]):
        assert main([*args, "--home", str(home.home)]) == 3
        err = capsys.readouterr().err
        assert err.startswith("Warehouse unreadable: ") and err.count("\n") == 1, err
        assert "ingest --rebuild" in err and "Traceback" not in err


def test_bad_flags_stay_exit_2_while_the_warehouse_is_down(
    home: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    for flags in (["--min", "bogus=1"], ["--min", "pass_rate=80"], ["--min", "accuracy>1"], []):
        assert main(["check", "r1", *flags, "--home", str(home.home)]) == 2
        assert capsys.readouterr().err.count("\n") == 1
    assert main(["sql", "SELECT 1", "--max-rows", "0", "--home", str(home.home)]) == 2
