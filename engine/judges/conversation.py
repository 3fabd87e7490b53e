"""The conversation judge's contract: what one turn said, what a judge answers about a reply,
the conversation's retention and completeness, and the ``ConversationJudge`` protocol both the
local rules (``engine.scoring.conversation``) and the LLM judge over HTTP
(``engine.judges.http.conversational``) implement.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from engine.judges.base import Usage


@dataclass(frozen=True)
class Said:
    """One turn as it was said in this run (a generated reply replaces the test set's)."""

    turn: int
    role: str
    content: str
    expected: str = ""


@dataclass(frozen=True)
class TurnVerdict:
    """A judge's grading of one assistant reply."""

    expectation_score: float | None
    """0-1; None when the turn has no expectation."""
    relevant: bool
    """Relevant to the window before it."""
    in_role: bool | None
    """Keeps the chatbot role; None without a role."""
    reason: str = ""
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True)
class Intent:
    """A user intention and whether the conversation satisfied it."""

    text: str
    satisfied: bool


@dataclass(frozen=True)
class Retention:
    """Assistant turns that show knowledge attrition, and why."""

    attrition: frozenset[int]
    reason: str = ""
    usage: Usage = field(default_factory=Usage)
    why: Mapping[int, str] = field(default_factory=dict)
    """Per attrition turn, what it asked again for (when the judge says)."""


@dataclass(frozen=True)
class Completeness:
    """The user's intents and whether each was satisfied."""

    intents: tuple[Intent, ...]
    reason: str = ""
    usage: Usage = field(default_factory=Usage)


class ConversationJudge(Protocol):
    """What grades conversations: the local rules or an LLM judge."""

    @property
    def name(self) -> str:
        """``local`` or ``provider:model``."""
        ...

    async def grade_turn(self, role: str, window: Sequence[Said], reply: Said) -> TurnVerdict:
        """Grade one reply seeing the window of turns before it."""
        ...

    async def retention(self, turns: Sequence[Said]) -> Retention:
        """Find knowledge attrition over the whole conversation."""
        ...

    async def completeness(self, turns: Sequence[Said]) -> Completeness:
        """List the user's intents and whether each was satisfied."""
        ...


def render(turns: Sequence[Said]) -> str:
    """Turns as numbered ``[n] role: text`` lines, for judge prompts."""
    return "\n".join(f"[{t.turn}] {t.role}: {t.content}" for t in turns) or "(none)"
