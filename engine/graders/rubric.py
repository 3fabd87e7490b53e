"""``llm-rubric``: a rubric text judged by a language model (the write-up's ``llm-judge``).

The judge seam of ``engine.judges.base`` scores the fixed answer-synthesis rubric only, so
a free rubric needs one more method. ``RubricJudge`` is that method as a Protocol; any
judge that has it can grade rubric files. The prompt and the reply parser below are the
write-up's, so HTTP judges can implement ``grade_rubric`` with two calls:
``rubric_messages(...)`` then ``parse_rubric_reply(text)``.

The local judge is deterministic (claim splitting, embeddings and rules): it cannot read
a free rubric, and pretending would give numbers that mean nothing. It grades rubrics made
of checkable criteria (``engine.graders.local_rubric``: "mentions X", "under N words",
"cites a source", ...); any other criterion raises ``LocalJudgeRefusal`` naming it while
graders are loaded, before any call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from engine.graders.base import (
    GradeInput,
    Grader,
    GraderConfigError,
    GraderError,
    GraderResult,
    passes,
)
from engine.graders.local_rubric import (
    Criterion,
    LocalJudgeRefusal,
    compile_rubric,
    grade_locally,
)
from engine.graders.options import RubricOptions
from engine.graders.spec import GraderSpec
from engine.judges.base import JudgeError, JudgeResponseError, RubricVerdict, Usage

RUBRIC_SYSTEM_PROMPT = (
    "You are an evaluation judge. Assess the output against the given criteria.\n"
    "Respond with ONLY a JSON object in this exact format:\n"
    '{"pass": true/false, "score": 0.0-1.0, "reason": "brief explanation"}'
)
"""The write-up's system prompt for rubric judging."""

_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


@runtime_checkable
class RubricJudge(Protocol):
    """A judge that can grade an output against a free rubric text."""

    @property
    def name(self) -> str:
        """Judge identifier (``local``, ``openai:gpt-4o-mini``, ...)."""
        ...

    async def grade_rubric(
        self, rubric: str, question: str, answer: str, expected: str, context: Sequence[str]
    ) -> RubricVerdict:
        """Grade ``answer`` against ``rubric``. Raises JudgeError / JudgeResponseError."""
        ...


def rubric_user_prompt(
    rubric: str, question: str, answer: str, expected: str, context: Sequence[str] = ()
) -> str:
    """The write-up's user prompt: task, output, rubric, reference (and context if any)."""
    parts = [
        "## Evaluation Task",
        "",
        "**Input/Question:**",
        question,
        "",
        "**Output to Evaluate:**",
        answer,
        "",
        "**Rubric/Criteria:**",
        rubric.strip(),
    ]
    if expected:
        parts += ["", "**Expected/Reference Output:**", expected]
    if context:
        parts += ["", "**Context:**", "\n\n".join(context)]
    parts += [
        "",
        "Based on the rubric, evaluate whether the output passes or fails.",
        "Provide a score from 0.0 to 1.0 and a brief reason.",
    ]
    return "\n".join(parts)


def parse_rubric_reply(text: str, usage: Usage | None = None) -> RubricVerdict:
    """Read the judge's JSON reply (the first ``{...}`` in it).

    The write-up falls back to looking for the word "pass" and inventing 0.7/0.3; we
    raise JudgeResponseError instead, so a reply we cannot read is an error row rather
    than a made-up score.
    """
    match = _JSON_OBJECT.search(text)
    if match is None:
        raise JudgeResponseError(f"rubric reply holds no JSON object: {text[:120]!r}")
    try:
        data = json.loads(match.group(0))
    except json.JSONDecodeError as err:
        raise JudgeResponseError(f"rubric reply is not valid JSON: {err.msg}") from err
    score = data.get("score") if isinstance(data, dict) else None
    if isinstance(score, bool) or not isinstance(score, int | float) or not 0.0 <= score <= 1.0:
        raise JudgeResponseError(
            f"rubric reply has no score between 0 and 1: {match.group(0)[:120]!r}"
        )
    reason = data.get("reason", "")
    return RubricVerdict(
        score=float(score), reason=str(reason) if reason is not None else "", usage=usage or Usage()
    )


def where(spec: GraderSpec) -> str:
    """``grader 'id' (file)`` for messages."""
    return f"grader {spec.id!r}" + (f" ({spec.source})" if spec.source else "")


def is_local(judge: object | None) -> bool:
    """Whether ``judge`` is the deterministic local judge."""
    return judge is not None and str(getattr(judge, "name", "")) == "local"


def require_rubric_judge(spec: GraderSpec, judge: object | None) -> RubricJudge:
    """The judge, checked to be able to grade rubrics. Raises GraderConfigError otherwise."""
    if judge is None:
        raise GraderConfigError(
            f"{where(spec)} is {spec.type} and needs a judge; none was configured"
        )
    if is_local(judge):
        raise LocalJudgeRefusal(
            f"{where(spec)} is an {spec.type}: its rubric must be read by a language "
            "model, and the local judge is deterministic and cannot grade free rubrics. Run "
            "with --judge openai:MODEL, anthropic:MODEL or ollama:MODEL, or leave this grader out."
        )
    if not isinstance(judge, RubricJudge):
        raise GraderConfigError(
            f"{where(spec)} is {spec.type}, but judge {getattr(judge, 'name', '?')!r} has no "
            "grade_rubric method"
        )
    return judge


class RubricGrader(Grader):
    """Asks the judge to grade the output by the rubric; pass = score >= threshold.

    With the local judge the rubric's criteria are checked by rule (compiled here, so an
    uncheckable criterion is refused before anything runs)."""

    def __init__(self, spec: GraderSpec, judge: object | None) -> None:
        super().__init__(spec)
        assert isinstance(spec.options, RubricOptions)
        self._rubric = spec.options.rubric
        self._threshold = spec.threshold if spec.threshold is not None else 0.7
        self._criteria: tuple[Criterion, ...] = ()
        self._judge: RubricJudge | None = None
        if is_local(judge):
            self._criteria = compile_rubric(self._rubric, f"{where(spec)} is an {spec.type}")
        else:
            self._judge = require_rubric_judge(spec, judge)

    async def grade(self, sample: GradeInput) -> GraderResult:
        """One judge call (none with the local judge). Raises GraderError when the judge
        fails or answers badly."""
        if self._judge is None:
            score, reason = grade_locally(self._criteria, sample.output)
            return GraderResult(passed=passes(score, self._threshold), score=score, reason=reason)
        try:
            verdict = await self._judge.grade_rubric(
                self._rubric,
                sample.case.query,
                sample.output,
                sample.expected,
                sample.case.effective_context,
            )
        except JudgeError as err:
            raise GraderError(
                f"llm-rubric grader {self.id!r}: judge {self._judge.name} failed: {err}"
            ) from err
        passed = passes(verdict.score, self._threshold)
        reason = verdict.reason.strip() or f"judge gave {verdict.score:.2f}"
        return GraderResult(passed=passed, score=verdict.score, reason=reason, usage=verdict.usage)
