"""Tool-call metrics in a real run: the agent test set through ``evalhouse run`` (which
ingests) into the warehouse, read back from the view ``tool_scores`` and gated by
``evalhouse check``."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.settings import Paths
from evalhouse.cli import main
from warehouse.queries import Warehouse

AGENT_SET = Path(__file__).resolve().parents[2] / "data" / "testsets" / "agent_tools.jsonl"

# Right tools and an answer the reference supports: 01, 05 (an extra call does not undo the
# task), 06 and 08 (the expected calls in order, one in between). Every other case misses a
# call, gets an argument or the order wrong, or (10) answers against the reference.
COMPLETED = {"agent-01-right", "agent-05-extra-call", "agent-06-ordered-right",
             "agent-08-ordered-extra"}  # fmt: skip


@pytest.fixture
def run_id(home: Paths, capsys: pytest.CaptureFixture[str]) -> str:
    code = main(["run", "--home", str(home.home), "--test-set", str(AGENT_SET), "--name", "agent"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out.strip().splitlines()[-1]


def test_tool_metrics_reach_the_view_and_the_gate(
    run_id: str, home: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    wh = Warehouse(home.warehouse)
    frame = wh.sql(
        "SELECT sample_id, metric, value, score FROM tool_scores WHERE run_id = $run",
        {"run": run_id},
    ).frame
    got = {(s, m): (v, score) for s, m, v, score in frame.iter_rows()}
    completion = {s: v for (s, m), (v, _) in got.items() if m == "task_completion"}
    assert {s for s, v in completion.items() if v == 1.0} == COMPLETED
    assert len(completion) == 10
    assert got[("agent-04-missing-call", "tool_recall")] == (0.5, 50.0)
    assert got[("agent-05-extra-call", "redundant_calls")] == (2.0, None)
    assert ("agent-01-right", "order_exact") not in got  # order does not matter there
    assert got[("agent-07-wrong-order", "order_subsequence")] == (0.0, 0.0)

    calls = wh.sql(
        "SELECT metric, value, label, reason FROM sample_scores WHERE run_id = $run "
        "AND scorer = 'tools' AND sample_id = 'agent-04-missing-call' "
        "AND starts_with(metric, 'call:') ORDER BY metric",
        {"run": run_id},
    ).frame.rows()
    assert calls == [
        ("call:1", 1.0, "lookup_order", 'called with {"order_id": "555"}'),
        ("call:2", None, "create_ticket", "never called"),
    ]

    # means over the 10 cases: recall 8.5 / 10, completion 4 / 10, redundant calls 4 / 10
    base = ["check", run_id, "--home", str(home.home)]
    assert (
        main([*base, "--min", "tools:tool_recall=0.8", "--max", "tools:redundant_calls=0.5"]) == 0
    )
    assert main([*base, "--min", "tools:tool_recall=0.9"]) == 1
    assert main([*base, "--min", "tools:task_completion=0.5"]) == 1
    capsys.readouterr()
    assert main([*base, "--min", "tools:nonsense=0.5"]) == 2
    assert "tools:task_completion" in capsys.readouterr().err
