"""Test-set versions on the dashboard: the Runs page shows each run's version; Compare of a
run on version 1 and a run on version 3 warns and, while "Only the cases both runs share"
is on, compares only the cases both scored with the same content (real runs, real
warehouse)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engine.settings import Paths
from tests.dashboard.conftest import AppFactory, table
from tests.testset_versions_home import NAME, build_versioned_home, case_ids

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def versioned(tmp_path_factory: pytest.TempPathFactory) -> tuple[Paths, dict[str, str], list[str]]:
    folder: Path = tmp_path_factory.mktemp("dash-versions")
    home, runs = build_versioned_home(folder)
    return home, runs, case_ids(folder / "ids")


def test_runs_page_shows_each_runs_test_set_version(
    app: AppFactory, versioned: tuple[Paths, dict[str, str], list[str]]
) -> None:
    home, runs, _ids = versioned
    at = app(home, "runs")
    rows = table(at, "test_set_version")
    assert sorted((str(r["name"]), r["test_set_version"]) for r in rows) == [
        ("nightly v1", 1),
        ("nightly v1 again", 1),
        ("nightly v2", 2),
        ("nightly v3", 3),
    ]
    at.selectbox(key="runs_detail_run").set_value(runs["v3"]).run()
    facts = table(at, "Field")
    assert {"Field": "Test set version", "Value": f"{NAME} v3"} in facts


def _caption_count(at: AppTest) -> int:
    captions = [c.value for c in at.caption if "largest regression first" in c.value]
    assert captions, "no per-sample caption"
    return int(captions[0].split()[0])


def test_compare_of_v1_and_v3_warns_and_keeps_to_the_shared_cases(
    app: AppFactory, versioned: tuple[Paths, dict[str, str], list[str]]
) -> None:
    home, runs, ids = versioned
    at = app(home, "compare")
    at.selectbox(key="compare_run").set_value(runs["v3"]).run()
    at.selectbox(key=f"compare_baseline_{runs['v3']}").set_value(runs["v1"]).run()
    assert not at.exception
    warnings = [w.value for w in at.warning if "different versions" in w.value]
    assert len(warnings) == 1
    assert f"baseline {NAME} v1, challenger {NAME} v3" in warnings[0]
    assert "Cases the same in both: 1 (baseline 4, challenger 4)" in warnings[0]
    # Kept to the shared cases: only the case no version edited is compared.
    assert _caption_count(at) == 1
    assert [r["sample_id"] for r in table(at, "sample_id")] == [ids[0]]
    # Off: every case id both runs scored, edited ones included.
    at.toggle(key="compare_shared").set_value(False).run()
    assert _caption_count(at) == 3
    assert sorted(r["sample_id"] for r in table(at, "sample_id")) == sorted(ids[:3])


def test_compare_of_the_same_version_says_nothing(
    app: AppFactory, versioned: tuple[Paths, dict[str, str], list[str]]
) -> None:
    home, runs, _ids = versioned
    at = app(home, "compare")
    at.selectbox(key="compare_run").set_value(runs["v1-again"]).run()
    at.selectbox(key=f"compare_baseline_{runs['v1-again']}").set_value(runs["v1"]).run()
    assert not [w for w in at.warning if "different versions" in w.value]
    assert not [t for t in at.toggle if t.key == "compare_shared"]
    assert f"Both runs scored {NAME} v1." in [c.value for c in at.caption]
    assert _caption_count(at) == 4
