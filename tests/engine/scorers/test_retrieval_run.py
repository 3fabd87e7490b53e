"""Retrieval metrics in a real run: a small JSONL test set through ``evalhouse run`` (which
ingests) into the warehouse, checked in SQL, on the Overview/Trends queries, and on the
Sample page's rank table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engine.settings import Paths
from evalhouse.cli import main
from tests.dashboard.conftest import table
from warehouse import queries as q
from warehouse.queries import Filters, SampleRef, Warehouse

APP = str(Path(__file__).resolve().parents[3] / "dashboard" / "streamlit_app.py")

CASES = [
    {  # ranked by id: p1#0 at rank 2, p2#0 not retrieved
        "id": "by-id",
        "domain": "acme.example",
        "query": "How much is Pro?",
        "response": "Pro costs $20 a month.",
        "expected_answer": {"text": "Pro costs $20 per month."},
        "ground_truth": [
            {"chunk_id": "p1#0", "page_url": "https://acme.example/pricing", "text": "Pro: $20."},
            {"chunk_id": "p2#0", "page_url": "https://acme.example/faq", "text": "<b>FAQ</b>"},
        ],
        "context": ["Blog.", "Pro: $20.", "Team plan."],
        "retrieved_context_ids": ["blog#1", "p1#0", "team#0"],
    },
    {  # no ids: the retrieved texts are matched to the ground truth, first rank exact
        "id": "by-text",
        "domain": "acme.example",
        "query": "When is support open?",
        "response": "Weekdays.",
        "ground_truth": [{"chunk_id": "s#0", "text": "Support is open on weekdays."}],
        "context": ["support is open   on weekdays.", "Other."],
    },
    {  # no retrieval data at all: no rows, not zeros
        "id": "plain",
        "domain": "acme.example",
        "query": "Who are you?",
        "response": "Acme's assistant.",
        "expected_answer": {"text": "Acme's assistant."},
    },
]


@pytest.fixture
def scored(home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    test_set = tmp_path / "cases.jsonl"
    test_set.write_text("".join(json.dumps(c) + "\n" for c in CASES), encoding="utf-8")
    code = main(["run", "--home", str(home.home), "--test-set", str(test_set), "--name", "rag",
                 "--retrieval-k", "1,3"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    return out.strip().splitlines()[-1]


def test_a_run_writes_retrieval_rows_that_reach_the_warehouse_views(
    scored: str, home: Paths
) -> None:
    wh = Warehouse(home.warehouse)
    rows = wh.sql(
        "SELECT sample_id, metric, value, label FROM sample_scores "
        "WHERE run_id = $run AND scorer = 'retrieval' ORDER BY sample_id, metric",
        {"run": scored},
    ).frame
    got = {(s, m): (v, label) for s, m, v, label in rows.iter_rows()}
    assert {s for s, _ in got} == {"by-id", "by-text"}  # "plain" has no row at all
    assert got[("by-id", "mrr")][0] == 0.5
    assert got[("by-id", "hit@1")][0] == 0.0 and got[("by-id", "hit@3")][0] == 1.0
    assert got[("by-id", "recall@3")][0] == 0.5
    assert got[("by-id", "precision@3")][0] == pytest.approx(1 / 3)
    assert ("by-id", "ndcg@5") not in got  # k = 1,3 from --retrieval-k
    assert got[("by-id", "rank:p1#0")] == (2.0, "id")
    assert got[("by-id", "rank:p2#0")] == (None, "id")
    assert got[("by-text", "mrr")][0] == 1.0 and got[("by-text", "rank:s#0")] == (1.0, "text")
    means = wh.sql(
        "SELECT metric, avg(score) AS score FROM retrieval_scores WHERE run_id = $run "
        "GROUP BY metric ORDER BY metric",
        {"run": scored},
    ).frame
    assert dict(means.iter_rows())["mrr"] == pytest.approx(75.0)  # (50 + 100) / 2, x 100
    domain = q.domain_retrieval_metrics(wh, scored, None, Filters())
    assert list(domain["metric"])[:3] == ["mrr", "hit@1", "hit@3"]
    assert domain.filter(domain["metric"] == "recall@3")["mean"][0] == pytest.approx(75.0)
    trends = q.trends(wh)
    assert "retrieval:mrr" in set(trends["metric"])
    assert q.check_metrics(wh, scored)["retrieval:mrr"] == pytest.approx(0.75)
    ranks = q.sample_retrieval(wh, SampleRef(scored, "by-id"))
    assert ranks.rows() == [
        ("p1#0", 2, "id", "rank 2 (p1#0), same id"),
        ("p2#0", None, "id", "not among the 3 retrieved passages"),
    ]


def test_the_sample_page_shows_the_rank_table_and_the_overview_the_metrics(
    scored: str, home: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALHOUSE_HOME", str(home.home))
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(run=scored, sample="by-id", iteration="1")
    at.switch_page("app_pages/sample.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Retrieval" in [s.value for s in at.subheader]
    (frame,) = [f.value for f in at.dataframe if "matched_by" in f.value.columns]
    assert list(frame["passage"]) == ["p1#0", "p2#0"]
    assert frame["rank"].iloc[0] == 2
    assert not any("<b>" in m.value for m in at.markdown)
    overview = AppTest.from_file(APP, default_timeout=60)
    overview.switch_page("app_pages/overview.py")
    overview.run()
    assert not overview.exception, [e.value for e in overview.exception]
    assert "Retrieval MRR" in {row["Metric"] for row in table(overview, "Noise")}
