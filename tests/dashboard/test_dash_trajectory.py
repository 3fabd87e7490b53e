"""The trajectory view of the Sample page: every kind of mismatch named in words beside the
expected call, a production trace's steps in order with their durations, and tool names,
arguments and outputs shown as text (never markup)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dashboard.components.trajectory import trajectory_html, trajectory_view
from engine.settings import Paths, resolve_paths
from tests.dashboard.agent_home import DATA, HOSTILE, HOSTILE_ID, TRACE_ID, build_agent_home
from tests.dashboard.conftest import AppFactory, table

CASES = {
    c["id"]: c
    for c in map(json.loads, (DATA / "testsets" / "agent_tools.jsonl").read_text().splitlines())
}


def marks(case: dict[str, Any]) -> list[tuple[str, str, str]]:
    view = trajectory_view(case)
    assert view is not None
    return [(r.step, r.expected, r.mark.word if r.mark else "") for r in view.rows]


def test_each_mismatch_is_named_beside_its_expected_call() -> None:
    assert marks(CASES["agent-01-right"]) == [
        ("tool lookup_order", "lookup_order(order_id=12345)", "right")
    ]
    assert marks(CASES["agent-02-wrong-tool"]) == [
        ("tool search_faq", "lookup_order(order_id=12345)", "wrong tool")
    ]
    assert marks(CASES["agent-03-wrong-argument"]) == [
        ("tool lookup_order", "lookup_order(order_id=12345)", "wrong argument")
    ]
    assert marks(CASES["agent-04-missing-call"]) == [
        ("tool lookup_order", "lookup_order(order_id=555)", "right"),
        ("(not called)", "create_ticket(order_id=555, summary=<string>)", "missing call"),
    ]
    assert marks(CASES["agent-05-extra-call"]) == [
        ("tool lookup_order", "lookup_order(order_id=12345)", "right"),
        ("tool lookup_order", "", "extra call"),
        ("tool get_refund_policy", "", "extra call"),
    ]
    view = trajectory_view(CASES["agent-03-wrong-argument"])
    assert view is not None and view.rows[0].mark is not None
    assert view.rows[0].mark.detail == 'argument order_id is "12354", expected "12345"'
    assert view.summary == "1 tool call against 1 expected: 1 wrong argument."
    ordered = trajectory_view(CASES["agent-07-wrong-order"])
    assert ordered is not None and ordered.summary.endswith("out of order.")
    assert trajectory_view({"id": "plain", "query": "q"}) is None  # not an agent case


def test_markup_in_tool_names_arguments_and_outputs_is_text() -> None:
    view = trajectory_view(HOSTILE)
    assert view is not None
    out = trajectory_html(view).replace("<wbr>", "")  # line-break chances aside
    assert "<script>" not in out and "<img" not in out
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out
    assert "&lt;img src=x onerror=alert(2)&gt;" in out
    assert "**bold** [x](javascript:alert(3))" in out  # literal: never rendered as Markdown
    assert [r.mark.word for r in view.rows if r.mark] == ["wrong tool"]


@pytest.fixture(scope="module")
def agent_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Paths, str]]:
    home = resolve_paths(tmp_path_factory.mktemp("agents") / "home")
    yield home, build_agent_home(home, tmp_path_factory.mktemp("agents-work"))


def test_the_sample_page_shows_a_traces_steps_in_order(
    app: AppFactory, agent_home: tuple[Paths, str]
) -> None:
    home, run_id = agent_home
    at = app(home, "sample", run=run_id, sample=TRACE_ID, iteration="1")
    assert "Trajectory" in [h.value for h in at.subheader]
    (table,) = [h.value.replace("<wbr>", "") for h in at.html if "What the agent" in h.value]
    steps = [table.index(s) for s in (
        "Model turn", "lookup_order</div>", "check_return_eligibility</div>",
    )]  # fmt: skip
    assert steps == sorted(steps)
    assert "200 ms" in table and "740 ms" in table  # the tool's and the last turn's durations
    assert "2 tool calls against 2 expected: 2 right." in table
    assert "asks for: lookup_order(order_id=12345)" in table
    hostile = app(home, "sample", run=run_id, sample=HOSTILE_ID, iteration="1")
    (table,) = [h.value for h in hostile.html if "What the agent did" in h.value]
    assert "<script>" not in table and "wrong tool" in table


def test_a_case_without_tools_has_no_trajectory_section(
    app: AppFactory, fixture_home: Paths
) -> None:
    at = app(fixture_home, "sample", run="r2", sample="acme-q1", iteration="1")
    assert "Trajectory" not in [h.value for h in at.subheader]


_ = Path  # the module imports Path for type hints of fixtures used by the browser test


def test_a_generated_response_is_told_apart_from_the_recorded_trajectory() -> None:
    from streamlit.testing.v1 import AppTest

    def page(response: str) -> AppTest:
        def script(case: dict, response: str) -> None:  # type: ignore[type-arg]
            from dashboard.components.trajectory import show_trajectory

            show_trajectory(case, response)

        at = AppTest.from_function(script, args=(CASES["agent-01-right"], response))
        return at.run()

    recorded = str(CASES["agent-01-right"]["response"])
    assert [c.value for c in page(recorded).caption] == []
    assert "generated anew" in page("A new answer from the target.").caption[0].value


def test_the_overview_lists_the_tool_call_metrics_of_agent_cases(
    app: AppFactory, agent_home: tuple[Paths, str]
) -> None:
    from dashboard import data
    from warehouse.queries import Filters, Warehouse

    home, run_id = agent_home
    frame = data.overview(Warehouse(home.warehouse), run_id, None, Filters())
    assert "tools:tool_f1_mean" in frame.columns
    assert "tools:redundant_calls_mean" not in frame.columns  # a count, not on 0-100
    # The same mean as the tool_scores view over the run's agent cases.
    by_sql = Warehouse(home.warehouse).sql(
        "SELECT domain, avg(score) AS m FROM tool_scores WHERE run_id = $r "
        "AND metric = 'tool_f1' GROUP BY domain",
        {"r": run_id},
    )
    expected = dict(by_sql.frame.iter_rows())
    for row in frame.iter_rows(named=True):
        assert row["tools:tool_f1_mean"] == pytest.approx(expected.get(row["domain"]))
    at = app(home, run=run_id)
    shown = [str(r["Metric"]) for r in table(at, "Metric")]
    assert "Tool F1" in shown and "Task completion" in shown
