"""The default baseline: the previous completed run of the same series (view run_series),
on both backends."""

from __future__ import annotations

from datetime import timedelta

from engine.lake import write_part
from tests.conftest import Store
from tests.factories import T0, result_record, run_record
from warehouse.queries import baseline_run, previous_run, run_tiers


def test_baseline_is_the_previous_completed_run_of_the_series(store: Store) -> None:
    home = store.home
    day = timedelta(days=1)
    runs = [
        # (run id, name, series, status, day)
        ("n1", "nightly 2026-11-01", None, "completed", 0),
        ("o1", "other", None, "completed", 1),
        ("n2", "nightly 2026-11-02", None, "cancelled", 2),  # partial: never a baseline
        ("n3", "nightly_20261103", None, "completed", 3),
        ("w1", "acme week 1", None, "completed", 4),
        ("w2", "acme Week-2", None, "completed", 5),
        ("p1", "prompt v1", "support bot", "completed", 6),
        ("p2", "prompt v2", "support bot", "completed", 7),  # --series joins other names
        ("e1", "eval 2026-W45", None, "completed", 8),
        ("e2", "eval", None, "completed", 9),
        ("d1", "week 1", None, "completed", 10),  # only a week: the test set names it
        ("d2", "week 2", None, "completed", 11),
    ]
    for run_id, name, series, status, days in runs:
        test_set = f"sets/demo-week-{days}.jsonl" if run_id[0] == "d" else "tests.jsonl"
        record = run_record(
            run_id, T0 + days * day, name=name, series=series, status=status, test_set=test_set
        )
        write_part(home.lake, "runs", run_id, 0, [record])
        write_part(home.lake, "results", run_id, 1, [result_record(run_id, "s1")])
    store.ingest()
    wh = store.warehouse
    assert baseline_run(wh, "n3") == "n1"  # the cancelled n2 is skipped
    assert baseline_run(wh, "n2") == "n1"
    assert baseline_run(wh, "w2") == "w1"
    assert baseline_run(wh, "p2") == "p1"
    assert baseline_run(wh, "e2") == "e1"
    assert baseline_run(wh, "o1") is None and baseline_run(wh, "n1") is None
    series = dict(wh.sql("SELECT run_id, series FROM run_series").frame.iter_rows())
    assert series["n3"] == "nightly" and series["w2"] == "acme" and series["p1"] == "support bot"
    assert series["d1"] == "demo" and baseline_run(wh, "d2") == "d1"
    assert previous_run(wh, "n3") == "n2"  # previous_run keeps its meaning (time only)


def test_run_tiers_from_config_or_defaults(store: Store) -> None:
    home = store.home
    tiers = '{"analyzer": {"tiers": {"excellent": 90, "good": 80, "fair": 60}}}'
    write_part(home.lake, "runs", "t", 0, [run_record("t", T0, config=tiers)])
    write_part(home.lake, "runs", "u", 0, [run_record("u", T0 + timedelta(days=1))])
    bad = '{"analyzer": {"tiers": {"excellent": 90, "good": 80, "fair": 160}}}'
    write_part(home.lake, "runs", "v", 0, [run_record("v", T0 + timedelta(days=2), config=bad)])
    for run_id in "tuv":
        write_part(home.lake, "results", run_id, 1, [result_record(run_id, "s1")])
    store.ingest()
    wh = store.warehouse
    t = run_tiers(wh, "t")
    assert (t.excellent, t.good, t.fair) == (90.0, 80.0, 60.0)
    assert t.tier(72.5) == "fair"
    u = run_tiers(wh, "u")
    assert (u.excellent, u.good, u.fair) == (85.0, 70.0, 50.0)
    v = run_tiers(wh, "v")  # out of range: the defaults, not a crash
    assert (v.excellent, v.good, v.fair) == (85.0, 70.0, 50.0)
    assert run_tiers(wh, "nope").fair == 50.0


def test_run_info_row_has_exactly_the_typed_fields(store: Store) -> None:
    from typing import get_type_hints

    from warehouse.queries import RunInfo, run_info

    write_part(store.home.lake, "runs", "r", 0, [run_record("r", T0)])
    write_part(store.home.lake, "results", "r", 1, [result_record("r", "s1")])
    store.ingest()
    info = run_info(store.warehouse, "r")
    assert info is not None
    assert set(info) == set(get_type_hints(RunInfo))
    assert info["run_id"] == "r"
    assert run_info(store.warehouse, "nope") is None
