"""The default baseline: the previous run of the same test set, then of the same name (on
both backends)."""

from __future__ import annotations

from datetime import timedelta

from engine.lake import write_part
from tests.conftest import Store
from tests.factories import T0, result_record, run_record
from warehouse.queries import baseline_run, previous_run, run_tiers


def test_baseline_is_same_test_set_then_same_name(store: Store) -> None:
    home = store.home
    day = timedelta(days=1)
    runs = [
        # (run id, name, test set, day)
        ("a1", "weekly", "a.jsonl", 0),
        ("b1", "other", "b.jsonl", 1),
        ("a2", "weekly", "a.jsonl", 2),
        ("b2", "adhoc", "b.jsonl", 3),
        ("c1", "weekly", "c.jsonl", 4),
        ("d1", "lonely", "d.jsonl", 5),
    ]
    for run_id, name, test_set, days in runs:
        record = run_record(run_id, T0 + days * day, name=name, test_set=test_set)
        write_part(home.lake, "runs", run_id, 0, [record])
        write_part(home.lake, "results", run_id, 1, [result_record(run_id, "s1")])
    store.ingest()
    wh = store.warehouse
    assert baseline_run(wh, "a2") == "a1"  # not b1, the run just before it in time
    assert baseline_run(wh, "b2") == "b1"  # same test set, other name
    assert baseline_run(wh, "c1") == "a2"  # no earlier c.jsonl run: the same name
    assert baseline_run(wh, "d1") is None  # neither: no baseline rather than a wrong one
    assert baseline_run(wh, "a1") is None
    assert previous_run(wh, "a2") == "b1"  # previous_run keeps its meaning (time only)


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
