"""Test-set versions: a test set edited twice is versions 1 to 3 in the warehouse (real
runs, real lake, real ingest), each run knows its version, and ``evalhouse testset diff``
lists the cases added, removed and changed between two versions."""

from __future__ import annotations

import json

import pytest

from engine.models import TestCase
from engine.settings import Paths
from engine.testsets import versions
from engine.testsets.versions import cases_hash, diff_cases
from evalhouse.cli import main
from tests.testset_versions_home import NAME, build_versioned_home, case_ids
from warehouse import testset_queries as tq
from warehouse.queries import Warehouse

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def versioned(tmp_path_factory: pytest.TempPathFactory) -> tuple[Paths, dict[str, str], list[str]]:
    folder = tmp_path_factory.mktemp("versions")
    home, runs = build_versioned_home(folder)
    return home, runs, case_ids(folder / "ids")


def _case(case_id: str, query: str) -> TestCase:
    return TestCase.model_validate(
        {"id": case_id, "domain": "d.example", "query": query, "expected_answer": {"text": "x"}}
    )


def test_cases_hash_follows_the_cases_not_the_file_order() -> None:
    a, b = _case("a", "What is A?"), _case("b", "What is B?")
    assert cases_hash([a, b]) == cases_hash([b, a])
    assert cases_hash([a, b]) != cases_hash([a, _case("b", "What is B now?")])
    assert cases_hash([a, b]) != cases_hash([a])


def test_diff_names_the_fields_that_changed() -> None:
    old = {"a": json.dumps({"query": "q", "tags": ["x"]}), "b": json.dumps({"query": "q"})}
    new = {"a": json.dumps({"query": "q2", "tags": ["x"], "metadata": {}}), "c": "{}"}
    diff = diff_cases(old, new)
    assert diff.added == ("c",) and diff.removed == ("b",)
    assert [(c.sample_id, c.fields) for c in diff.changed] == [("a", ("metadata", "query"))]
    assert diff.unchanged == 0 and not diff.same


def test_a_test_set_edited_twice_has_three_versions(
    versioned: tuple[Paths, dict[str, str], list[str]],
) -> None:
    home, runs, ids = versioned
    wh = Warehouse(home.warehouse)
    found = tq.testset_version_list(wh, NAME)
    assert list(found["version"]) == [1, 2, 3]
    assert list(found["cases"]) == [4, 4, 4]
    assert list(found["runs"]) == [2, 1, 1]  # the reordered file is version 1 again
    assert list(found["first_run_id"]) == [runs["v1"], runs["v2"], runs["v3"]]
    by_run = {
        r["run_id"]: (r["test_set_name"], r["test_set_version"])
        for r in tq.run_testset_versions(wh, tuple(runs.values())).iter_rows(named=True)
    }
    assert by_run == {
        runs["v1"]: (NAME, 1),
        runs["v2"]: (NAME, 2),
        runs["v3"]: (NAME, 3),
        runs["v1-again"]: (NAME, 1),
    }
    third = tq.testset_version_cases(wh, NAME, 3)
    assert list(third["sample_id"]) == sorted([ids[0], ids[1], ids[2], ids[4]])
    edited = json.loads(third.filter(third["sample_id"] == ids[2])["case_json"][0])
    assert edited["expected_answer"]["text"].startswith("Updated: ")


def test_diff_lists_added_removed_and_changed_cases(
    versioned: tuple[Paths, dict[str, str], list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    home, _runs, ids = versioned
    assert main(["testset", "diff", NAME, "1", "v3", "--home", str(home.home)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{NAME} v1 -> v3: 1 added, 1 removed, 2 changed, 1 unchanged"
    assert sorted(lines[1:]) == sorted(
        [
            f"added    {ids[4]}",
            f"removed  {ids[3]}",
            f"changed  {ids[1]}  (query)",
            f"changed  {ids[2]}  (expected_answer)",
        ]
    )
    assert main(["testset", "diff", NAME, "1", "2", "--home", str(home.home)]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == [f"changed  {ids[1]}  (query)"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope", "1", "2"], "test set 'nope': no versions in the warehouse (known: support)"),
        ([NAME, "1", "4"], "V2 4: test set 'support' has versions 1 to 3"),
        ([NAME, "one", "2"], "V1 'one': a version is a number from 1"),
    ],
)
def test_diff_refuses_an_unknown_name_or_version_in_one_line(
    versioned: tuple[Paths, dict[str, str], list[str]],
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    home = versioned[0]
    assert main(["testset", "diff", *args, "--home", str(home.home)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.strip().splitlines()) == 1 and message in captured.err


def test_version_rows_keep_every_case_with_the_version_key() -> None:
    cases = [_case("a", "What is A?"), _case("b", "What is B?")]
    records = versions.version_case_records("r1", "set", cases)
    assert {r.sample_id for r in records} == {"a", "b"}
    assert {r.cases_hash for r in records} == {cases_hash(cases)}
    assert json.loads(records[0].case_json)["query"] == "What is A?"
