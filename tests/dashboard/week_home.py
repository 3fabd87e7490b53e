"""Homes after a week of real use, built from lake records and ingested into a real
warehouse: a weekly series whose judge changed, an ad-hoc launch, an alert; and a series
whose system really moved (movers to follow into Compare)."""

from __future__ import annotations

from datetime import timedelta

from engine.lake import write_part
from engine.models import AlertRecord, JudgeDriftRecord
from engine.settings import Paths
from ingest import ingest
from tests.factories import T0, result_record, run_record

DOMAINS = ("acme.example", "beta.example")
NOW = T0 + timedelta(days=30)


def week(home: Paths, run_id: str, week: int, judge: str, rubric: float, passed: bool) -> None:
    started = T0 + timedelta(days=7 * (week - 1))
    record = run_record(run_id, started, name=f"weekly week {week}", judge=judge)
    write_part(home.lake, "runs", run_id, 0, [record])
    scores = {
        "judge_faithfulness": rubric,
        "judge_completeness": rubric,
        "passed": passed,
        "overall": rubric,
    }
    rows = [
        result_record(run_id, f"{domain[:4]}-q{i}", domain=domain, **scores)
        for domain in DOMAINS
        for i in range(8)
    ]
    write_part(home.lake, "results", run_id, 1, rows)


def drift(home: Paths, run_id: str, baseline: str, shift: float) -> None:
    """A drift check that measured only judge faithfulness (completeness and pass rate
    stay unmeasured: not comparable)."""
    drift = JudgeDriftRecord(
        check_id=f"drift-{run_id}", run_id=run_id, baseline_run_id=baseline, series="weekly",
        anchor_run_id=baseline, metric="judge_faithfulness", old_judge="local@-",
        new_judge="openai:x@-", mean_shift=shift, ci_low=shift - 4, ci_high=shift + 4, n=16,
        checked_at=T0 + timedelta(days=8),
    )  # fmt: skip
    write_part(home.lake, "judge_drift", drift.check_id, 0, [drift])


def build_week_home(home: Paths) -> None:
    """weekly week 1 (local judge, rubric 4, all pass), week 2 (another judge: rubric 2,
    none pass; the answers are the same, so all of it is the judge's), a drift check of
    faithfulness only, an alert that week 2 set off, then an ad-hoc run of its own."""
    week(home, "w1", 1, "local", 4.0, True)
    week(home, "w2", 2, "openai:x", 2.0, False)
    drift(home, "w2", "w1", -50.0)
    alert = AlertRecord(
        alert_id="a1", run_id="w2", series="weekly", rule="faith-floor",
        metric="judge_faithfulness", state="firing", value=2.0, threshold=3.0, kind="min",
        message="m", evaluated_at=T0 + timedelta(days=7, hours=1),
    )  # fmt: skip
    write_part(home.lake, "alerts", "w2", 0, [alert])
    adhoc = run_record(
        "z1", T0 + timedelta(days=9), name="zephyr-big", test_set="uploads/zephyr-big.csv"
    )
    write_part(home.lake, "runs", "z1", 0, [adhoc])
    rows = [result_record("z1", f"z-q{i}", domain="zephyr.example") for i in range(8)]
    write_part(home.lake, "results", "z1", 1, rows)
    ingest(home)


def build_mover_home(home: Paths) -> None:
    """weekly week 1, then week 2 by the same judge with both analyzer metrics down in
    every domain (real movers)."""
    week(home, "w1", 1, "local", 4.0, True)
    week(home, "w1", 1, "local", 4.0, True)
    write_part(home.lake, "runs", "w2", 0, [run_record(
        "w2", T0 + timedelta(days=7), name="weekly week 2")])  # fmt: skip
    rows = [
        result_record("w2", f"{d[:4]}-q{i}", domain=d, accuracy=40.0 + i, completeness=30.0,
                      judge_faithfulness=4.0, judge_completeness=4.0, passed=True, overall=4.0)
        for d in DOMAINS for i in range(8)
    ]  # fmt: skip
    write_part(home.lake, "results", "w2", 1, rows)
    ingest(home)
