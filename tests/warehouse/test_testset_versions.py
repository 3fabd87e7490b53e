"""The test-set version views on both backends (the warehouse file and a DuckLake catalog on
PostgreSQL): versions numbered by first run per name, a run's version, a version's cases,
and the cases two runs share."""

from __future__ import annotations

from datetime import timedelta

from engine.lake import write_part
from engine.models import CaseRecord, TestCase
from engine.testsets import case_hash
from engine.testsets.versions import cases_hash, version_case_records
from tests.conftest import Store
from tests.factories import T0, run_record
from warehouse import testset_queries as tq


def _case(case_id: str, query: str) -> TestCase:
    return TestCase.model_validate(
        {"id": case_id, "domain": "d.example", "query": query, "expected_answer": {"text": "x"}}
    )


def _run(store: Store, run_id: str, day: int, name: str, cases: list[TestCase]) -> None:
    lake = store.home.lake
    started = T0 + timedelta(days=day)
    record = run_record(run_id, started, test_set_name=name, test_set_cases_hash=cases_hash(cases))
    write_part(lake, "runs", run_id, 0, [record])
    write_part(lake, "testset_cases", run_id, 0, version_case_records(run_id, name, cases))
    scored = [
        CaseRecord(run_id=run_id, sample_id=c.id, sample_hash=case_hash(c), domain=c.domain,
                   query=c.query, case_json=c.model_dump_json())
        for c in cases
    ]  # fmt: skip
    write_part(lake, "cases", run_id, 0, scored)


def test_versions_per_name_in_order_of_first_run(store: Store) -> None:
    a, b, c = _case("a", "What is A?"), _case("b", "What is B?"), _case("c", "What is C?")
    b2 = _case("b", "What is B now?")
    _run(store, "r1", 0, "shop", [a, b])
    _run(store, "r2", 1, "other", [a])  # another name: its own version 1
    _run(store, "r3", 2, "shop", [a, b2, c])
    _run(store, "r4", 3, "shop", [b, a])  # the first content again
    store.ingest()
    wh = store.warehouse
    versions = tq.testset_version_list(wh, "shop")
    assert list(versions["version"]) == [1, 2]
    assert list(versions["cases"]) == [2, 3] and list(versions["runs"]) == [2, 1]
    assert list(tq.testset_version_list(wh)["test_set_name"]) == ["other", "shop", "shop"]
    runs = tq.run_testset_versions(wh, ("r1", "r2", "r3", "r4"))
    assert list(runs["test_set_version"]) == [1, 1, 2, 1]
    second = tq.testset_version_cases(wh, "shop", 2)
    assert list(second["sample_id"]) == ["a", "b", "c"]
    assert list(second["sample_hash"]) == [case_hash(a), case_hash(b2), case_hash(c)]
    # shared: same id and content in both runs; b changed, c only in r3
    assert tq.shared_case_count(wh, "r3", "r1") == tq.SharedCases(3, 2, 1)
    assert tq.shared_case_count(wh, "r4", "r1") == tq.SharedCases(2, 2, 2)
