"""Grader-file and pairwise calls of an LLM judge over HTTP: free rubrics, G-Eval,
factuality and context relevance (the eval-harness write-up's ``llm-judge`` and
``promptfoo`` graders), and which of two answers is better (``compare-runs``).

Each call is one versioned prompt file of ``prompts/`` sent through the judge's client,
so it is retried, repaired once, cached and priced like every other judge call. A reply
that does not fit the asked shape is a ``JudgeResponseError``; nothing is guessed (the
write-up's fallback of reading the word "pass" as 0.7 is not kept).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from engine.judges.base import JudgeResponseError, RubricVerdict, Usage
from engine.models import Frozen

if TYPE_CHECKING:
    from engine.judges.http.prompt import JsonCalls, Prompt

GRADED_PROMPTS = (
    "grade_rubric",
    "geval_steps",
    "geval_score",
    "factuality",
    "context_relevance",
    "pairwise",
)
"""Prompt files of the grader calls (part of the judge's prompt-set version)."""

FACTUALITY_CATEGORIES = frozenset("ABCDE")
"""promptfoo's factuality categories: A subset, B superset, C equivalent, D disagreement,
E immaterial differences."""


class GEvalScore(Frozen):
    """A G-Eval score: 1-5 on the criterion, with what the steps found."""

    score: float
    """1-5."""
    reasoning: str = ""
    """What each step found."""
    usage: Usage = Usage()
    """What the call cost."""


class Factuality(Frozen):
    """promptfoo's factuality category of an output against the reference."""

    category: str
    """A, B, C, D or E."""
    reason: str = ""
    """The judge's explanation."""
    usage: Usage = Usage()
    """What the call cost."""


class Relevance(Frozen):
    """Which context sentences are relevant to the question."""

    relevant: tuple[bool, ...]
    """One flag per sentence, in order."""
    reason: str = ""
    """The judge's explanation."""
    usage: Usage = Usage()
    """What the call cost."""


class PairChoice(Frozen):
    """Which of two answers, shown in a given order, the judge found better."""

    better: str
    """``first``, ``second`` or ``tie`` (positions as shown, not runs)."""
    reason: str = ""
    """The judge's explanation."""
    usage: Usage = Usage()
    """What the call cost."""


def _object(payload: Any) -> dict[str, Any]:
    if not isinstance(payload, dict):
        raise JudgeResponseError("expected a JSON object")
    return payload


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else json.dumps(value)


def parse_graded_rubric(payload: Any) -> tuple[float, str]:
    """``{"pass": bool, "score": 0-1, "reason": str}`` -> (score, reason)."""
    obj = _object(payload)
    score = obj.get("score")
    if isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 1:
        raise JudgeResponseError(f'expected "score": a number from 0.0 to 1.0, got {score!r}')
    return float(score), _text(obj.get("reason"))


def parse_steps(payload: Any) -> list[str]:
    """``{"steps": [str, ...]}`` -> the non-blank steps (at least one)."""
    steps = _object(payload).get("steps")
    if not isinstance(steps, list) or not all(isinstance(s, str) for s in steps):
        raise JudgeResponseError('expected {"steps": [strings]}')
    out = [s.strip() for s in steps if s.strip()]
    if not out:
        raise JudgeResponseError("the evaluation steps are empty")
    return out


def parse_geval(payload: Any) -> tuple[float, str]:
    """``{"reasoning": str, "score": 1-5}`` -> (score, reasoning)."""
    obj = _object(payload)
    score = obj.get("score")
    if isinstance(score, bool) or not isinstance(score, int | float) or not 1 <= score <= 5:
        raise JudgeResponseError(f'expected "score": a number from 1 to 5, got {score!r}')
    return float(score), _text(obj.get("reasoning"))


def parse_factuality(payload: Any) -> tuple[str, str]:
    """``{"category": "A".."E", "reason": str}`` -> (category, reason)."""
    obj = _object(payload)
    raw = obj.get("category")
    category = raw.strip().strip("()").upper() if isinstance(raw, str) else ""
    if category not in FACTUALITY_CATEGORIES:
        raise JudgeResponseError(f'expected "category": one letter A-E, got {raw!r}')
    return category, _text(obj.get("reason"))


def parse_pair(payload: Any) -> tuple[str, str]:
    """``{"reason": str, "better": "1"|"2"|"tie"}`` -> (first|second|tie, reason)."""
    obj = _object(payload)
    raw = obj.get("better")
    value = str(raw).strip().lower() if isinstance(raw, str | int) else ""
    choice = {"1": "first", "2": "second", "tie": "tie"}.get(value)
    if choice is None or isinstance(raw, bool):
        raise JudgeResponseError(f'expected "better": "1", "2" or "tie", got {raw!r}')
    return choice, _text(obj.get("reason"))


def relevance_parser(count: int) -> Any:
    """A parser of ``{"relevant": [numbers 1..count], "reason": str}`` -> (flags, reason)."""

    def parse(payload: Any) -> tuple[tuple[bool, ...], str]:
        obj = _object(payload)
        numbers = obj.get("relevant")
        if not isinstance(numbers, list) or not all(
            isinstance(n, int) and not isinstance(n, bool) for n in numbers
        ):
            raise JudgeResponseError('expected {"relevant": [sentence numbers]}')
        outside = [n for n in numbers if not 1 <= n <= count]
        if outside:
            raise JudgeResponseError(f"sentence numbers {outside} are not between 1 and {count}")
        chosen = set(numbers)
        return tuple(i + 1 in chosen for i in range(count)), _text(obj.get("reason"))

    return parse


def _or_none(text: str) -> str:
    return text if text.strip() else "(none)"


def _numbered(texts: Sequence[str]) -> str:
    return "\n".join(f"[{i + 1}] {t}" for i, t in enumerate(texts))


class GradedCalls:
    """The grader calls of ``HttpJudge`` (mixed in; ``client`` and ``_prompts`` are its)."""

    client: JsonCalls
    _prompts: dict[str, Prompt]

    async def grade_rubric(
        self, rubric: str, question: str, answer: str, expected: str, context: Sequence[str]
    ) -> RubricVerdict:
        """The write-up's ``llm-judge`` call: score 0-1 by the rubric, with a reason."""
        (score, reason), usage = await self.client.complete_json(
            self._prompts["grade_rubric"],
            {
                "rubric": rubric.strip(),
                "question": question,
                "answer": answer,
                "expected": _or_none(expected),
                "context": _or_none("\n\n".join(context)),
            },
            parse_graded_rubric,
        )
        return RubricVerdict(score=score, reason=reason, usage=usage)

    async def geval_steps(self, rubric: str) -> tuple[tuple[str, ...], Usage]:
        """G-Eval's first step: the criterion turned into evaluation steps (cached like any
        judge call, so a rubric costs its steps once per judge model)."""
        steps, usage = await self.client.complete_json(
            self._prompts["geval_steps"], {"rubric": rubric.strip()}, parse_steps
        )
        return tuple(steps), usage

    async def geval_score(
        self,
        rubric: str,
        steps: Sequence[str],
        question: str,
        answer: str,
        expected: str,
        context: Sequence[str],
    ) -> GEvalScore:
        """G-Eval's second step: follow the steps on the output, score 1-5."""
        (score, reasoning), usage = await self.client.complete_json(
            self._prompts["geval_score"],
            {
                "rubric": rubric.strip(),
                "steps": "\n".join(f"{i + 1}. {step}" for i, step in enumerate(steps)),
                "question": question,
                "answer": answer,
                "expected": _or_none(expected),
                "context": _or_none("\n\n".join(context)),
            },
            parse_geval,
        )
        return GEvalScore(score=score, reasoning=reasoning, usage=usage)

    async def classify_factuality(self, question: str, answer: str, expected: str) -> Factuality:
        """promptfoo's factuality: the output's relation to the reference, A-E."""
        (category, reason), usage = await self.client.complete_json(
            self._prompts["factuality"],
            {"question": question, "answer": answer, "expected": expected},
            parse_factuality,
        )
        return Factuality(category=category, reason=reason, usage=usage)

    async def relevant_sentences(self, question: str, sentences: Sequence[str]) -> Relevance:
        """Which of ``sentences`` (context split into sentences) help answer ``question``."""
        if not sentences:
            return Relevance(relevant=())
        (flags, reason), usage = await self.client.complete_json(
            self._prompts["context_relevance"],
            {"question": question, "sentences": _numbered(sentences)},
            relevance_parser(len(sentences)),
        )
        return Relevance(relevant=flags, reason=reason, usage=usage)

    async def compare_pair(
        self, question: str, reference: str, first: str, second: str
    ) -> PairChoice:
        """Which of two answers to ``question`` is better, as shown (1 = ``first``)."""
        (better, reason), usage = await self.client.complete_json(
            self._prompts["pairwise"],
            {
                "question": question,
                "reference": _or_none(reference),
                "first": first,
                "second": second,
            },
            parse_pair,
        )
        return PairChoice(better=better, reason=reason, usage=usage)
