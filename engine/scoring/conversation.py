"""Conversation grading: the sliding window, the four conversational metrics, and the local
(offline, deterministic) judge of conversations.

The metrics are DeepEval's, as the eval-harness write-up defines them, each 0-1:

* relevancy: replies relevant to the ``window`` turns before them / assistant turns;
* knowledge retention: replies without attrition (asking again for what the user already
  gave) / assistant turns, judged on the full history;
* completeness: user intents satisfied by the end / user intents;
* role adherence: replies that keep the chatbot role / assistant turns (null without one).

Each assistant turn is also graded against its behavioural expectation (the CSV's
``expected_output``) with the same window. The window of turn ``i`` (0-based position) is
``turns[max(0, i - window):i]``, the write-up's formula.

The local judge uses the run's embedder and rules, and says what it cannot do: it reads
intents as the user's messages, relevance and expectations as embedding similarity, role
adherence as the absence of out-of-character self-references, and attrition as a reply that
asks again for a detail (order number, e-mail, phone, name, account, address) an earlier
user message gave, however it was given, or states it with another value
(``engine.scoring.retention``).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.judges.conversation import (
    Completeness,
    Intent,
    Retention,
    Said,
    TurnVerdict,
)
from engine.scoring.retention import attrition

DEFAULT_WINDOW = 5
"""Turns of history the judge sees with each reply (the write-up's recommendation)."""

EXPECTATION_PASS_AT = 0.5
"""An expectation score at or above this passes the turn (LLM judges score 0-1)."""


def window(turns: Sequence[Said], position: int, size: int) -> Sequence[Said]:
    """The ``size`` turns before ``turns[position]`` (fewer at the start)."""
    return turns[max(0, position - size) : position]


def ratio(hits: int, total: int) -> float | None:
    """hits / total, or None when there is nothing to count."""
    return hits / total if total else None


# --------------------------------------------------------------------------- local rules

RELEVANT_AT = 0.3
"""Cosine (local embedder) from which a reply counts as relevant to a message of its
window, or as answering a user intent. Measured on the write-up's support example (13
hand-made pairs): replies on topic reach 0.31-0.65 against the user message they answer,
unrelated or evasive replies -0.05-0.18."""

EXPECTATION_FLOOR = 0.1
"""Cosine that maps to expectation score 0. Same pairs: replies doing something else sit
at -0.05-0.13 against a behavioural expectation..."""
EXPECTATION_TOP = 0.45
"""...and replies doing what it says at 0.38-0.46; this cosine maps to score 1, so the
pass mark 0.5 falls at cosine 0.275, between the two groups."""

OUT_OF_ROLE = re.compile(
    r"\bas an? (?:ai|artificial intelligence|large language model|language model)\b"
    r"|\bi(?:'m| am) (?:an? )?(?:ai|artificial intelligence|language model|chatbot|chatgpt)\b"
    r"|\b(?:trained|created|developed) by openai\b|\bi(?:'m| am) chatgpt\b",
    re.IGNORECASE,
)
"""Out-of-character self-references: what breaks any role a chatbot is given."""


def asked_again(turns: Sequence[Said], reply: Said) -> str | None:
    """Why ``reply`` shows knowledge attrition: it asks again for a detail an earlier user
    message gave, or states it with another value (``engine.scoring.retention``); else
    None."""
    return attrition(turns, reply)


def expectation_score(cosine: float) -> float:
    """The local expectation score: cosine mapped linearly from the floor (0) to the top
    (1), clipped."""
    span = EXPECTATION_TOP - EXPECTATION_FLOOR
    return float(min(1.0, max(0.0, (cosine - EXPECTATION_FLOOR) / span)))


class LocalConversationJudge:
    """The deterministic conversation judge (see the module docstring for its rules)."""

    name = "local"

    def __init__(self, embedder: Any) -> None:
        self._embedder = embedder

    async def _cosines(self, left: Sequence[str], right: Sequence[str]) -> Any:
        if not left or not right:
            return np.zeros((len(left), len(right)))
        vectors = await asyncio.to_thread(self._embedder.embed, [*left, *right])
        matrix = np.asarray(vectors, dtype=np.float64)
        return matrix[: len(left)] @ matrix[len(left) :].T

    async def grade_turn(self, role: str, window: Sequence[Said], reply: Said) -> TurnVerdict:
        """Expectation and relevance by cosine; role by out-of-character phrases."""
        said = [t.content for t in window if t.content.strip()]
        targets = [reply.expected, *said] if reply.expected.strip() else said
        cos = await self._cosines([reply.content or " "], targets)
        reasons: list[str] = []
        score: float | None = None
        if reply.expected.strip():
            score = expectation_score(float(cos[0, 0]))
            reasons.append(f"cosine to the expectation {float(cos[0, 0]):.2f}")
            cos = cos[:, 1:]
        best = float(cos.max()) if cos.size else 0.0
        relevant = bool(said) and best >= RELEVANT_AT
        reasons.append(f"best cosine to the window {best:.2f} (relevant from {RELEVANT_AT})")
        in_role: bool | None = None
        if role.strip():
            found = OUT_OF_ROLE.search(reply.content)
            in_role = found is None
            reasons.append(f"out of role: {found.group(0)!r}" if found else "no out-of-role phrase")
        return TurnVerdict(score, relevant, in_role, "; ".join(reasons))

    async def retention(self, turns: Sequence[Said]) -> Retention:
        """Attrition: a question for a detail an earlier user message gave."""
        found = {t.turn: why for t in turns if t.role == "assistant"
                 if (why := asked_again(turns, t)) is not None}  # fmt: skip
        reason = "; ".join(found.values()) or "no reply asks again for a detail already given"
        return Retention(frozenset(found), reason, why=found)

    async def completeness(self, turns: Sequence[Said]) -> Completeness:
        """Intents are the user's messages; one is satisfied when a later reply reaches
        the relevance cosine against it."""
        users = [t for t in turns if t.role == "user" and t.content.strip()]
        replies = [t for t in turns if t.role == "assistant" and t.content.strip()]
        cos = await self._cosines([u.content for u in users], [r.content for r in replies])
        intents = []
        for i, user in enumerate(users):
            later = [j for j, r in enumerate(replies) if r.turn > user.turn]
            best = max((float(cos[i, j]) for j in later), default=0.0)
            intents.append(Intent(user.content, best >= RELEVANT_AT))
        done = sum(i.satisfied for i in intents)
        reason = (
            f"{done} of {len(intents)} user messages answered by a later reply "
            f"(cosine from {RELEVANT_AT}; the local judge reads each user message as an intent)"
        )
        return Completeness(tuple(intents), reason)
