"""The numbers the Sample and Claims pages show, against a hand count on a tiny run: two
iterations, two domains, three queries, every claim state; and the low_confidence queue,
least sure first, with the count its flag has."""

from __future__ import annotations

import pytest

from engine.lake import write_part
from engine.models import ClaimRecord, VerdictRecord
from engine.settings import Paths, resolve_paths
from ingest import ingest
from tests.dashboard.conftest import AppFactory, table
from tests.factories import T0, result_record, run_record
from warehouse import queries as q
from warehouse.queries import Warehouse

F, C, M = "found", "contradicted", "missing"
CLAIMS = {
    # sample: (domain, claim states of iteration 1, of iteration 2)
    "a-q1": ("a.example", (F, C, M), (F, F, M)),
    "a-q2": ("a.example", (F, F), (F, F)),
    "b-q1": ("b.example", (M, C), (M, C)),
}
LOW = {"a-q1": (0.55, 0.9), "b-q1": (0.3,), "a-q2": (0.95,)}
"""Verdict confidences of iteration 1; a sample with one below 0.6 is flagged."""


@pytest.fixture(scope="module")
def hand_home(tmp_path_factory: pytest.TempPathFactory) -> Paths:
    paths = resolve_paths(tmp_path_factory.mktemp("hand") / "home")
    write_part(paths.lake, "runs", "rh", 0, [run_record("rh", T0, iterations=2)])
    for iteration in (1, 2):
        claims, results, verdicts = [], [], []
        for sample, (domain, first, second) in CLAIMS.items():
            states = first if iteration == 1 else second
            claims += [
                ClaimRecord(
                    run_id="rh",
                    iteration=iteration,
                    sample_id=sample,
                    claim_id=f"c{i}",
                    claim_text=f"{sample} claim {i}.",
                    importance="required",
                    found=state == F,
                    status=state,
                    similarity=0.8 if state == F else 0.5,
                )
                for i, state in enumerate(states)
            ]
            sure = LOW[sample] if iteration == 1 else (0.99,)
            flags = ["low_confidence"] if min(sure) < 0.6 else []
            results.append(
                result_record("rh", sample, iteration=iteration, domain=domain, flags=flags)
            )
            verdicts += [
                VerdictRecord(
                    run_id="rh",
                    iteration=iteration,
                    sample_id=sample,
                    claim_index=i,
                    claim_text=f"{sample} says {i}.",
                    verdict="SUPPORTED",
                    confidence=p,
                )
                for i, p in enumerate(sure)
            ]
        # results last: a child part counts once its partition's results part is written
        for table_name, rows in (("claims", claims), ("verdicts", verdicts), ("results", results)):
            write_part(paths.lake, table_name, "rh", iteration, rows)
    ingest(paths)
    return paths


def test_claims_page_per_domain_and_per_query_match_the_hand_count(
    app: AppFactory, hand_home: Paths
) -> None:
    at = app(hand_home, "claims", run="rh")
    domains = {r["domain"]: r for r in table(at, "found_percent")}
    # first iterations only: a.example has a-q1 (F C M) and a-q2 (F F)
    a, b = domains["a.example"], domains["b.example"]
    assert (a["samples"], a["claims"], a["found"], a["contradicted"], a["missing"]) == (
        2, 5, 3, 1, 1,
    )  # fmt: skip
    assert a["found_percent"] == pytest.approx(60.0)
    assert (b["samples"], b["claims"], b["found"], b["contradicted"], b["missing"]) == (
        1, 2, 0, 1, 1,
    )  # fmt: skip
    queries = {r["sample_id"]: r for r in table(at, "missing_claims")}
    counts = {s: (r["claims"], r["found"], r["contradicted"], r["missing"]) for s, r in
              queries.items()}  # fmt: skip
    assert counts == {"a-q1": (3, 1, 1, 1), "a-q2": (2, 2, 0, 0), "b-q1": (2, 0, 1, 1)}
    assert {r["iteration"] for r in queries.values()} == {1}
    # the per-domain row is the sum of its queries' rows
    for domain, row in domains.items():
        mine = [r for r in queries.values() if r["domain"] == domain]
        for column in ("claims", "found", "contradicted", "missing"):
            assert row[column] == sum(int(r[column]) for r in mine)  # type: ignore[call-overload]


@pytest.mark.parametrize(
    ("iteration", "headings"),
    [
        ("1", ["**Missing (1)**", "**:red[Contradicted (1)]**", "**Found (1)**"]),
        ("2", ["**Missing (1)**", "**:red[Contradicted (0)]**", "**Found (2)**"]),
    ],
)
def test_sample_page_counts_the_iteration_it_shows(
    app: AppFactory, hand_home: Paths, iteration: str, headings: list[str]
) -> None:
    at = app(hand_home, "sample", run="rh", sample="a-q1", iteration=iteration)
    shown = [m.value for m in at.markdown if str(m.value).startswith("**")]
    for heading in headings:
        assert heading in shown


def test_the_low_confidence_queue_is_least_sure_first_and_counts_its_flag(
    app: AppFactory, hand_home: Paths
) -> None:
    wh = Warehouse(hand_home.warehouse)
    flags = dict(q.run_flags(wh, "rh").iter_rows())
    assert flags == {"low_confidence": 2}  # a-q1 and b-q1 of iteration 1
    queue = q.run_samples(wh, "rh", flag="low_confidence")
    assert list(queue["sample_id"]) == ["b-q1", "a-q1"]  # lowest confidence 0.3, then 0.55
    assert list(queue["lowest_confidence"]) == pytest.approx([0.3, 0.55])
    assert int(queue["total_rows"][0]) == flags["low_confidence"]
    at = app(hand_home, "sample", run="rh", flag="low_confidence")
    assert [r["sample_id"] for r in table(at, "lowest_confidence")] == ["b-q1", "a-q1"]
    captions = [str(c.value) for c in at.caption]
    assert any(c.startswith("2 result rows flagged low_confidence") for c in captions)
    assert "low_confidence (2)" in at.selectbox(key="sample_flag").options
