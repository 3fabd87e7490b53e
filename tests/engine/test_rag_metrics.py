"""RAG metrics: the white paper's case study with the local judge and the real model, edge
cases (no context, no reference, indistinct answer) and the weighted overall."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from engine.judges.local.judge import LocalJudge
from engine.models import RagWeights
from engine.scoring.faithfulness import claim_faithfulness
from engine.scoring.rag import NO_CONTEXT, RagScores, evaluate_rag, scale, weighted_overall
from tests.engine.test_claim_faithfulness import ScriptedJudge
from tests.engine.test_local_judge import minilm

__all__ = ["minilm"]

QUESTION = "Do you think this kind of technology is exciting or concerning?"
ANSWER = "Game changer for disabilities, but emotionally exhausting."
REFERENCE = "Mostly exciting, though there are some risks."
CHUNKS = [
    "Interviewer: What's a benefit you can imagine?\nInterviewee: For people with "
    "disabilities—especially speech disabilities—it could be a game changer. Also might help "
    "people with anxiety express themselves more easily.",
    "Interviewer: And a possible downside?\nInterviewee: Mental fatigue maybe? Or like, "
    "accidentally leaking a private thought. I think it could be emotionally exhausting to "
    "always filter your own brain.",
    "Interviewer: Could this tech exist soon?\nInterviewee: I mean, we're not *that* far off. "
    "With the pace of brain-computer interface research? It's coming. So yeah, maybe within "
    "our lifetime.",
]


def rag(judge: Any, answer: str, context: list[str], reference: str = REFERENCE) -> RagScores:
    async def go() -> RagScores:
        faith = await claim_faithfulness(answer, context, judge)
        return await evaluate_rag(
            judge,
            question=QUESTION,
            answer=answer,
            reference=reference,
            context=context,
            claims=[c.claim.text for c in faith.checks],
            verdicts=[c.verdict for c in faith.checks],
        )

    return asyncio.run(go())


def test_white_paper_case_study(minilm: Any) -> None:
    scores = rag(LocalJudge(minilm), ANSWER, CHUNKS)
    assert scores.faithfulness == 5.0  # 2 of 2 facts supported
    assert scores.precision is not None and round(scores.precision, 1) == 3.7  # chunks 1, 2 of 3
    assert [u.used for u in scores.chunk_uses] == [True, True, False]
    assert scores.recall == 5.0  # 2 of 2 facts covered
    assert scores.correctness is not None and 1.0 <= scores.correctness <= 5.0
    assert scores.relevance is not None and 1.0 <= scores.relevance <= 5.0
    assert scores.warnings == ()


def test_no_context_follows_the_paper() -> None:
    judge = ScriptedJudge({"a": "NOT_ENOUGH_INFO"})
    scores = rag(judge, "a", [])
    assert scores.faithfulness == 5.0
    assert NO_CONTEXT in scores.warnings
    assert scores.precision is None  # the paper's NaN
    assert scores.recall == 5.0


def test_ratios_from_verdicts() -> None:
    judge = ScriptedJudge(
        {"a": "SUPPORTED", "b": "CONTRADICTED", "c": "NOT_ENOUGH_INFO", "d": "SUPPORTED"}
    )
    scores = rag(judge, "a\nb\nc\nd", ["chunk"])
    assert scores.faithfulness == pytest.approx(scale(0.5))
    # 2 of 4 facts stated: a contradicted fact is not covered, nor one without evidence
    assert scores.recall == pytest.approx(scale(0.5))
    assert scores.precision == 5.0
    assert scores.correctness == 3 and scores.relevance == 4


def test_a_wholly_contradicted_answer_has_no_recall() -> None:
    judge = ScriptedJudge({"a": "CONTRADICTED", "b": "CONTRADICTED"})
    scores = rag(judge, "a\nb", ["chunk"])
    assert scores.recall == 1.0  # 0 of 2 covered, on 1-5


def test_indistinct_answer_uses_reference_facts() -> None:
    judge = ScriptedJudge({"Mostly exciting, though there are some risks.": "SUPPORTED"})
    scores = rag(judge, "", ["chunk"])
    assert scores.recall == 5.0  # the reference's one fact is covered
    assert scores.precision == 5.0
    assert scores.relevance == 1.0


def test_missing_reference_skips_correctness() -> None:
    scores = rag(ScriptedJudge({"a": "SUPPORTED"}), "a", ["chunk"], reference="")
    assert scores.correctness is None
    assert any("reference" in w for w in scores.warnings)
    expected = (0.2 * 5 + 0.2 * 5 + 0.2 * 5) / 0.6
    assert scores.overall == pytest.approx(expected)


def test_weighted_overall_default_and_custom_weights() -> None:
    metrics: dict[str, float | None] = {
        "correctness": 3.0,
        "faithfulness": 5.0,
        "precision": 3.0,
        "recall": 5.0,
        "relevance": 1.0,
    }
    assert weighted_overall(metrics) == pytest.approx(0.4 * 3 + 0.2 * 5 + 0.2 * 3 + 0.2 * 5)
    metrics["precision"] = None
    assert weighted_overall(metrics) == pytest.approx((0.4 * 3 + 0.2 * 5 + 0.2 * 5) / 0.8)
    custom = RagWeights(correctness=0, faithfulness=0, precision=0, recall=0, relevance=1)
    assert weighted_overall(metrics, custom) == 1.0
    zero = RagWeights(correctness=0, faithfulness=0, precision=0, recall=0, relevance=0)
    assert weighted_overall(metrics, zero) is None
