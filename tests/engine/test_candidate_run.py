"""Two candidates graded on the same cases, rows through the lake, weighted by hand."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from engine.candidates import Candidate
from engine.candidates.plan import CandidatePlan, plan_candidate_run
from engine.graders import GraderConfigError, LocalJudgeRefusal
from engine.graders.rubric import RubricVerdict
from engine.lake import read_table, write_part
from engine.models import GraderScoreRecord, SampleKey, TestCase
from engine.scorers import SampleInput
from engine.scorers.graders import GraderScorer
from tests.oracles.weighted import candidate_scores

PROJECT = Path(__file__).resolve().parents[1] / "data" / "project"


def _key(candidate: Candidate, case: TestCase, run_id: str, iteration: int) -> SampleKey:
    return SampleKey(run_id=run_id, iteration=iteration, sample_id=case.id, candidate=candidate.id)


async def grade_sample(
    plan: CandidatePlan,
    candidate: Candidate,
    case: TestCase,
    output: str,
    *,
    run_id: str,
    iteration: int,
    values: dict[str, object] | None = None,
) -> list[GraderScoreRecord]:
    """The grader rows the run's grader scorer gives one output."""
    sample = SampleInput(_key(candidate, case, run_id, iteration), case, output, values or {})
    outcome = await GraderScorer(plan).score(sample)
    return list(outcome.records["grader_scores"])  # type: ignore[arg-type]


def failed_sample_rows(
    plan: CandidatePlan,
    candidate: Candidate,
    case: TestCase,
    error: str,
    *,
    run_id: str,
    iteration: int,
) -> list[GraderScoreRecord]:
    """The rows the grader scorer writes for a sample that produced no output."""
    outcome = GraderScorer(plan).without_output(
        _key(candidate, case, run_id, iteration), case, error
    )
    return list(outcome.records["grader_scores"])  # type: ignore[arg-type]


class AnswerJudge:
    """Grades by a table of answers, so every score is known."""

    name = "fake:judge"

    def __init__(self, scores: dict[str, float]) -> None:
        self.scores = scores

    async def grade_rubric(
        self, rubric: str, question: str, answer: str, expected: str, context: Sequence[str]
    ) -> RubricVerdict:
        return RubricVerdict(score=self.scores[answer], reason=f"graded {answer}")


CASES = [
    TestCase(id="q1", query="Q1?", metadata={"difficulty": "easy"}),
    TestCase(id="q2", query="Q2?"),
]


def test_plan_checks_everything_up_front() -> None:
    judge = AnswerJudge({})
    plan = plan_candidate_run(PROJECT, ["analyst", "analyst-citations"], None, CASES, judge=judge)
    assert [c.id for c in plan.candidates] == ["analyst", "analyst-citations"]
    assert [g.id for g in plan.graders] == ["faithfulness", "llm-judge-helpful"]
    assert plan.weights == {
        "analyst": {"faithfulness": 0.6, "llm-judge-helpful": 0.4},
        "analyst-citations": {"faithfulness": 0.7, "llm-judge-helpful": 0.3},
    }
    assert plan.needs_values == {"judge_faithfulness"}
    assert plan.case_errors == {
        ("analyst-citations", "q2"): "case 'q2': candidate 'analyst-citations' user_template "
        "uses {{metadata.difficulty}}, but the case's metadata has no field 'difficulty'"
    }


def test_plan_refuses_local_judge_and_weights_without_recommendations() -> None:
    class Local:
        name = "local"

    with pytest.raises(LocalJudgeRefusal):
        plan_candidate_run(PROJECT, ["analyst"], None, CASES, judge=Local())
    plan = plan_candidate_run(
        PROJECT, ["summarizer-concise"], ["mentions-tiers", "cites-source", "rag"], CASES
    )
    # no recommended_graders: each grader's own weight
    assert plan.weights == {
        "summarizer-concise": {"mentions-tiers": 0.5, "cites-source": 1.0, "rag": 1.0}
    }
    with pytest.raises(GraderConfigError, match="unknown grader 'nope'"):
        plan_candidate_run(PROJECT, ["analyst"], ["nope"], CASES)


def test_two_candidates_through_the_lake_weighted_by_hand(tmp_path: Path) -> None:
    judge = AnswerJudge({"a1": 0.5, "a2": 0.9, "c1": 1.0})
    plan = plan_candidate_run(PROJECT, ["analyst", "analyst-citations"], None, CASES, judge=judge)
    analyst, citations = plan.candidates
    q1, q2 = CASES

    async def run() -> list[GraderScoreRecord]:
        rows: list[GraderScoreRecord] = []
        kw = {"run_id": "r1", "iteration": 1}
        rows += await grade_sample(plan, analyst, q1, "a1", values={"judge_faithfulness": 5}, **kw)
        rows += await grade_sample(plan, analyst, q2, "a2", values={"judge_faithfulness": 4}, **kw)
        rows += await grade_sample(
            plan, citations, q1, "c1", values={"judge_faithfulness": 3}, **kw
        )
        rows += failed_sample_rows(
            plan, citations, q2, plan.case_errors[(citations.id, q2.id)], **kw
        )
        return rows

    rows = asyncio.run(run())
    assert write_part(tmp_path, "grader_scores", "r1", 1, rows) is not None
    stored = read_table(tmp_path, "grader_scores", "r1").to_pylist()
    assert len(stored) == 8
    first = next(r for r in stored if r["candidate"] == "analyst" and r["sample_id"] == "q1")
    assert (first["grader"], first["score"], first["passed"], first["weight"]) == (
        "faithfulness",
        1.0,
        True,
        0.6,
    )
    assert first["reason"] == "judge_faithfulness 5 of 1-5 -> 1.000 (at or above threshold 1)"

    scores = {s.candidate: s for s in candidate_scores(stored)}
    a, c = scores["analyst"], scores["analyst-citations"]
    # analyst: faithfulness (1.0 + 0.75) / 2 = 0.875, helpful (0.5 + 0.9) / 2 = 0.7
    assert a.equal_weight == pytest.approx(0.7875)
    assert a.weighted == pytest.approx(0.6 * 0.875 + 0.4 * 0.7)
    assert a.pass_rate == 0.0  # q1 fails helpful (0.5 < 0.7), q2 faithfulness (0.75 < 1)
    # citations: faithfulness 0.5 (q2 failed), helpful 1.0
    assert c.equal_weight == pytest.approx(0.75)
    assert c.weighted == pytest.approx(0.7 * 0.5 + 0.3 * 1.0)
    assert c.samples == 2 and c.pass_rate == 0.0
    errors = {g.grader: g.errors for g in c.graders}
    assert errors == {"faithfulness": 1, "llm-judge-helpful": 1}


def test_a_failing_grader_gives_a_null_row_and_the_others_still_run() -> None:
    judge = AnswerJudge({"x": 0.8})
    plan = plan_candidate_run(PROJECT, ["analyst"], None, CASES, judge=judge)
    rows = asyncio.run(
        grade_sample(plan, plan.candidates[0], CASES[0], "x", run_id="r", iteration=1)
    )
    by = {r.grader: r for r in rows}
    assert by["faithfulness"].score is None and by["faithfulness"].passed is None
    assert by["faithfulness"].reason == (
        "built-in 'faithfulness' needs judge_faithfulness, which the sample does not have"
    )
    assert (by["llm-judge-helpful"].score, by["llm-judge-helpful"].passed) == (0.8, True)
