"""A home with one real run of agent cases for the trajectory view: the ten written cases of
``tests/data/testsets/agent_tools.jsonl``, the production trace of
``tests/data/traces/agent_genai.json`` imported with its expectations (steps with timings),
and a case whose tool name, arguments and output are markup (it must show as text)."""

from __future__ import annotations

import json
from pathlib import Path

from engine.settings import Paths
from engine.testsets import load_test_set
from engine.testsets.traces import read_traces
from engine.testsets.traces.expected import Expectations, with_expectations
from evalhouse.cli import main

DATA = Path(__file__).resolve().parents[1] / "data"
TRACE_ID = "0af7651916cd43dd8448eb211c80319d"
HOSTILE_ID = "agent-hostile"
HOSTILE = {
    "id": HOSTILE_ID,
    "domain": "shop.example",
    "query": "Where is order <b>77</b>?",
    "response": "Order 77 is on its way.",
    "expected_answer": {"text": "Order 77 is on its way."},
    "tools_called": [
        {"name": "<script>alert(1)</script>", "arguments": {"q": "<img src=x onerror=alert(2)>"},
         "output": "**bold** [x](javascript:alert(3))"},
    ],
    "expected_tools": [{"name": "lookup_order", "arguments": {"order_id": "77"}}],
}  # fmt: skip


def build_agent_home(home: Paths, work: Path) -> str:
    """Run the agent cases into ``home`` (ingested); the run id."""
    trace_file = DATA / "traces" / "agent_genai.json"
    traces = read_traces(str(trace_file), trace_file.read_text(encoding="utf-8"))
    assert traces is not None
    expected = Expectations.of(load_test_set(DATA / "traces" / "agent_expected.jsonl").cases)
    imported, _ = with_expectations(traces.cases, expected)
    lines = (DATA / "testsets" / "agent_tools.jsonl").read_text(encoding="utf-8").splitlines()
    lines += [c.model_dump_json(exclude_defaults=True) for c in imported]
    lines.append(json.dumps(HOSTILE))
    test_set = work / "agents.jsonl"
    test_set.write_text("\n".join(lines) + "\n", encoding="utf-8")
    args = ["run", "--home", str(home.home), "--test-set", str(test_set), "--name", "agents"]
    code = main(args)
    assert code in (0, 1), code
    return main_run_id(home)


def main_run_id(home: Paths) -> str:
    """The id of the home's one run."""
    (run_dir,) = home.lake.joinpath("runs").glob("run_id=*")
    return run_dir.name.removeprefix("run_id=")
