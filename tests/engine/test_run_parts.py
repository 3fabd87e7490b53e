"""The pieces of a run that need no run: run ids, per-iteration metrics by hand, the
estimate and the progress sinks."""

from __future__ import annotations

import io
import json
from pathlib import Path

from engine.progress import LineProgress, TerminalProgress, choose_progress
from engine.runner import estimate_run, iteration_metrics, new_run_id
from engine.testsets import load_test_set
from tests.engine.test_runner import config_for, write_cases


def test_run_ids_sort_by_time_and_are_safe() -> None:
    from datetime import UTC, datetime

    a = new_run_id(datetime(2026, 1, 1, tzinfo=UTC))
    b = new_run_id(datetime(2026, 1, 2, tzinfo=UTC))
    assert a < b and a.startswith("20260101T000000Z-")
    assert all(ch.isalnum() or ch in "._-" for ch in a)


def test_iteration_metrics_by_hand() -> None:
    rows = [
        {
            "sample_id": "a",
            "query": "q",
            "accuracy": 80.0,
            "judge_faithfulness": 5.0,
            "judge_completeness": 4.0,
            "passed": True,
            "cost_usd": 0.5,
            "error": None,
            "input_tokens": 10,
            "judge_input_tokens": 5,
        },
        {
            "sample_id": "b",
            "query": "q",
            "accuracy": 60.0,
            "judge_faithfulness": 3.0,
            "judge_completeness": 2.0,
            "passed": False,
            "cost_usd": 0.25,
            "error": None,
        },
        {"sample_id": "c", "query": "q", "error": "target: boom", "cost_usd": 0.0},
    ]
    got = iteration_metrics("r", 1, rows)
    assert (got.samples, got.errors) == (3, 1)
    assert got.accuracy_mean == 70.0 and got.judge_faithfulness_mean == 4.0
    assert got.faithfulness_pass_rate == 0.5 and got.pass_rate == 0.5
    assert got.cost_usd == 0.75 and got.input_tokens == 15
    low = json.loads(got.low_faithfulness)
    assert low["categories"]["mixed"]["count"] == 1
    assert low["categories"]["completeness_failures"]["examples"][0]["sample_id"] == "b"


def test_estimate(tmp_path: Path) -> None:
    ts = load_test_set(write_cases(tmp_path / "e.jsonl", 10))
    local = estimate_run(config_for(ts, iterations=3), ts)
    assert (local.target_calls, local.judge_calls, local.cost_usd) == (0, 0, 0.0)
    assert local.seconds > 0 and "local judge" in local.render()
    remote = estimate_run(
        config_for(
            ts,
            iterations=2,
            judge="openai:gpt-4o-mini",
            target="openai:gpt-4o-mini",
            judge_calls="per_prompt",
        ),
        ts,
    )
    # responses not known yet (5 claims assumed): extract + 5 verifications + rubric +
    # relevance + correctness + 1 context chunk = 10 calls per sample
    assert remote.target_calls == 20 and remote.judge_calls == 2 * 10 * 10
    assert remote.cost_usd > 0 and remote.input_tokens > remote.output_tokens > 0
    text = remote.render()
    assert "judge calls:   200" in text and "$" in text
    recorded = estimate_run(
        config_for(ts, judge="openai:gpt-4o-mini", judge_calls="per_prompt"), ts
    )
    # one-sentence recorded responses: extract + 1 + rubric + relevance + correctness + 1 chunk
    assert (recorded.target_calls, recorded.judge_calls) == (0, 10 * 6)
    # batched (the default): extract + 1 verification naming the chunks + rubric + relevance
    # + correctness = 5 calls per sample, and fewer tokens sent
    batched = estimate_run(config_for(ts, judge="openai:gpt-4o-mini"), ts)
    assert (batched.target_calls, batched.judge_calls) == (0, 10 * 5)
    assert batched.input_tokens < recorded.input_tokens and batched.cost_usd < recorded.cost_usd
    remote_batched = estimate_run(
        config_for(ts, iterations=2, judge="openai:gpt-4o-mini", target="openai:gpt-4o-mini"), ts
    )
    assert remote_batched.judge_calls == 2 * 10 * 5


def test_progress_sinks() -> None:
    out = io.StringIO()
    bar = TerminalProgress(out, width=10, min_interval_s=0)
    bar.update(5, 10, 0.5, 2.0, 2.5)
    bar.message("hello")
    bar.update(10, 10, 1.0, 2.0, 0.0)
    text = out.getvalue()
    assert "\r[#####.....] 5/10  50.0% 2.0/s ETA 00:02 $0.5000" in text
    assert "hello\n" in text and text.endswith("$1.0000\n")
    lines = io.StringIO()
    plain = LineProgress(lines, interval_s=60)
    plain.update(1, 10, 0.0, 1.0, None)
    plain.update(2, 10, 0.0, 1.0, None)  # throttled
    plain.update(10, 10, 0.0, 1.0, 0.0)  # the last one always prints
    assert lines.getvalue().count("progress ") == 2
    assert "eta --:--" in lines.getvalue()
    assert isinstance(choose_progress(io.StringIO()), LineProgress)
