"""Answer synthesis: pass rule, per-iteration metrics and the low-faithfulness analysis."""

from __future__ import annotations

import json

import pytest

from engine.scoring.synthesis import (
    SynthesisOutcome,
    iteration_metrics,
    low_faithfulness_analysis,
    overall,
    passed,
)


def outcome(i: int, f: float | None, c: float | None) -> SynthesisOutcome:
    return SynthesisOutcome(
        sample_id=f"s{i}",
        question=f"question {i}?",
        faithfulness=f,
        completeness=c,
        faithfulness_reasoning=f"faith reason {i}",
        completeness_reasoning=f"complete reason {i}",
    )


def test_pass_rule_and_overall() -> None:
    assert passed(4, 4) and passed(5, 4)
    assert not passed(3, 5) and not passed(5, 3)
    assert overall(5, 3) == 4.0


SAMPLES = [
    outcome(0, 5, 5),
    outcome(1, 4, 3),
    outcome(2, 3, 4),
    outcome(3, 1, 2),
    outcome(4, 2, 5),
    outcome(5, 3, 1),
    outcome(6, None, None),  # an error row
]


def test_iteration_metrics() -> None:
    m = iteration_metrics(SAMPLES)
    assert m["samples"] == 7 and m["scored"] == 6
    assert m["judge_faithfulness_mean"] == pytest.approx(18 / 6)
    assert m["judge_completeness_mean"] == pytest.approx(20 / 6)
    assert m["faithfulness_pass_rate"] == pytest.approx(2 / 6)
    assert m["completeness_pass_rate"] == pytest.approx(3 / 6)
    assert m["pass_rate"] == pytest.approx(1 / 6)
    empty = iteration_metrics([])
    assert empty["pass_rate"] is None and empty["judge_faithfulness_mean"] is None


def test_low_faithfulness_analysis() -> None:
    analysis = low_faithfulness_analysis(SAMPLES, max_examples=1)
    json.dumps(analysis)  # JSON-serialisable for IterationMetricsRecord.low_faithfulness
    cats = analysis["categories"]
    assert cats["completely_false"]["count"] == 1
    assert cats["mostly_false"]["count"] == 1
    assert cats["mixed"]["count"] == 2
    assert cats["completeness_failures"]["count"] == 3
    assert len(cats["mixed"]["examples"]) == 1
    example = cats["completely_false"]["examples"][0]
    assert example == {"sample_id": "s3", "question": "question 3?", "reasoning": "faith reason 3"}
    assert cats["completeness_failures"]["examples"][0]["reasoning"] == "complete reason 1"
    insight = analysis["insight"]
    assert "4 of 6 answers (67%) scored faithfulness 3 or below" in insight
    assert "mixed" in insight.lower() and "3 of 6 answers (50%) failed completeness" in insight
    assert low_faithfulness_analysis(SAMPLES) == low_faithfulness_analysis(SAMPLES)


def test_insight_when_all_pass() -> None:
    analysis = low_faithfulness_analysis([outcome(0, 5, 5), outcome(1, 4, 4)])
    assert analysis["insight"].startswith("All 2 scored answers reached faithfulness 4")
    assert low_faithfulness_analysis([])["insight"] == "No scored samples in this iteration."
