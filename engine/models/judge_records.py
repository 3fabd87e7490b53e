"""Each ask of each judge about one answer (lake and warehouse table ``judge_asks``,
registered in ``LAKE_TABLES``): what a repeat or a jury member said on its own, before the
asks are combined into the ``results`` row, so the judge's reliability can be measured."""

from __future__ import annotations

from engine.models.base import Frozen


class JudgeAskRecord(Frozen):
    """One judge metric from one ask of one judge about one sample's answer. Written when
    the run asks a judge more than once about an answer (iterations or ``judge_repeats``
    above 1 with an LLM judge) or scores with a jury."""

    run_id: str
    """Run the row belongs to."""
    iteration: int
    """Iteration number."""
    sample_id: str
    """Test-case id."""
    candidate: str = ""
    """Candidate that produced the response."""
    judge: str
    """The judge asked (``openai:gpt-4o-mini``, ``local``)."""
    ask: int
    """Which ask of this judge in this iteration, from 0 (``judge_repeats`` asks each)."""
    metric: str
    """The ``results`` column the value is for: ``judge_faithfulness``,
    ``judge_completeness``, ``overall``, ``passed``, ``claim_faithfulness``, ``rag_*``."""
    score_100: float | None = None
    """The value in its 0-100 form (1-5 by (s - 1) x 25, 0-1 by x 100, a pass as 100 and a
    fail as 0); null when the ask gave none."""
    passed: bool | None = None
    """The pass/fail this ask implies: the answer's pass for ``passed``, else
    ``score_100`` at or above 75 (4 on 1-5, the rubric's pass)."""
