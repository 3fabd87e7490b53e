"""Conversation calls of an LLM judge over HTTP: one reply with its sliding window, and the
whole conversation for knowledge retention and completeness (DeepEval's conversational
metrics, as the eval-harness write-up describes them).

Each call is one versioned prompt file of ``prompts/`` sent through the judge's client, so
it is retried, repaired once, cached and priced like every other judge call; a reply of
the wrong shape is a ``JudgeResponseError``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from engine.judges.base import JudgeResponseError
from engine.judges.conversation import (
    Completeness,
    Intent,
    Retention,
    Said,
    TurnVerdict,
    render,
)

if TYPE_CHECKING:
    from engine.judges.http.prompt import JsonCalls, Prompt

CONVERSATION_PROMPTS = ("conversation_turn", "knowledge_retention", "conversation_completeness")
"""Prompt files of the conversation calls (part of the judge's prompt-set version)."""


def _object(payload: Any) -> dict[str, Any]:
    if not isinstance(payload, dict):
        raise JudgeResponseError("expected a JSON object")
    return payload


def _reason(obj: dict[str, Any]) -> str:
    value = obj.get("reason")
    return value if isinstance(value, str) else ""


def parse_turn(has_expectation: bool, has_role: bool) -> Any:
    """A parser of ``{"expectation_score": 0-1|null, "relevant": bool, "in_role":
    bool|null, "reason": str}``; a score is required when the turn has an expectation,
    ``in_role`` when the conversation has a role."""

    def parse(payload: Any) -> tuple[float | None, bool, bool | None, str]:
        obj = _object(payload)
        score = obj.get("expectation_score")
        number = isinstance(score, int | float) and not isinstance(score, bool)
        in_range = isinstance(score, int | float) and 0 <= float(score) <= 1
        if has_expectation and not (number and in_range):
            raise JudgeResponseError(
                f'expected "expectation_score": a number from 0.0 to 1.0, got {score!r}'
            )
        relevant = obj.get("relevant")
        if not isinstance(relevant, bool):
            raise JudgeResponseError(f'expected "relevant": true or false, got {relevant!r}')
        in_role = obj.get("in_role")
        if has_role and not isinstance(in_role, bool):
            raise JudgeResponseError(f'expected "in_role": true or false, got {in_role!r}')
        return (
            float(score) if has_expectation and score is not None else None,
            relevant,
            in_role if has_role else None,
            _reason(obj),
        )

    return parse


def parse_retention(assistant_turns: frozenset[int]) -> Any:
    """A parser of ``{"attrition_turns": [assistant turn numbers], "reason": str}``."""

    def parse(payload: Any) -> tuple[frozenset[int], str]:
        obj = _object(payload)
        numbers = obj.get("attrition_turns")
        if not isinstance(numbers, list) or not all(
            isinstance(n, int) and not isinstance(n, bool) for n in numbers
        ):
            raise JudgeResponseError('expected {"attrition_turns": [turn numbers]}')
        outside = sorted(set(numbers) - assistant_turns)
        if outside:
            raise JudgeResponseError(f"turns {outside} are not assistant turns")
        return frozenset(numbers), _reason(obj)

    return parse


def parse_completeness(payload: Any) -> tuple[tuple[Intent, ...], str]:
    """``{"intents": [{"intent": str, "satisfied": bool}], "reason": str}``."""
    obj = _object(payload)
    raw = obj.get("intents")
    if not isinstance(raw, list):
        raise JudgeResponseError('expected {"intents": [{"intent": ..., "satisfied": ...}]}')
    intents = []
    for item in raw:
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("intent"), str)
            or not isinstance(item.get("satisfied"), bool)
        ):
            raise JudgeResponseError('each intent must be {"intent": text, "satisfied": bool}')
        intents.append(Intent(item["intent"], item["satisfied"]))
    return tuple(intents), _reason(obj)


def _or_none(text: str) -> str:
    return text if text.strip() else "(none)"


class ConversationCalls:
    """The conversation calls of ``HttpJudge`` (mixed in; ``client`` and ``_prompts`` are
    its)."""

    client: JsonCalls
    _prompts: dict[str, Prompt]

    async def grade_turn(self, role: str, window: Sequence[Said], reply: Said) -> TurnVerdict:
        """One reply against its expectation, its window and the chatbot role."""
        has_expectation, has_role = bool(reply.expected.strip()), bool(role.strip())
        (score, relevant, in_role, reason), usage = await self.client.complete_json(
            self._prompts["conversation_turn"],
            {
                "chatbot_role": _or_none(role),
                "window": render(window),
                "turn": str(reply.turn),
                "reply": reply.content,
                "expected": _or_none(reply.expected),
            },
            parse_turn(has_expectation, has_role),
        )
        return TurnVerdict(score, relevant, in_role, reason, usage)

    async def retention(self, turns: Sequence[Said]) -> Retention:
        """Assistant turns that forget or ask again for what the user gave."""
        assistant = frozenset(t.turn for t in turns if t.role == "assistant")
        (found, reason), usage = await self.client.complete_json(
            self._prompts["knowledge_retention"],
            {"transcript": render(turns)},
            parse_retention(assistant),
        )
        return Retention(found, reason, usage)

    async def completeness(self, turns: Sequence[Said]) -> Completeness:
        """The user's intents and whether each was satisfied."""
        (intents, reason), usage = await self.client.complete_json(
            self._prompts["conversation_completeness"],
            {"transcript": render(turns)},
            parse_completeness,
        )
        return Completeness(intents, reason, usage)
