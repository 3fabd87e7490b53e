"""Inputs: the native test-set format (a case and its parts) and conversations."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from engine.models.base import (
    Frozen,
    Importance,
)
from engine.models.tools import ExpectedTool, ToolCall, TrajectoryStep


class ExpectedClaim(Frozen):
    """One fact the expected answer contains and a good response should state."""

    id: str = Field(min_length=1)
    """Identifier of the claim, unique within its test case (for example ``c1``)."""
    text: str = Field(min_length=1)
    """The claim as a short declarative sentence."""
    importance: Importance = "required"
    """How much the claim matters: ``required``, ``expected`` or ``optional``."""


class ExpectedAnswer(Frozen):
    """The answer a correct response should give."""

    text: str = ""
    """The reference answer as prose; used for accuracy."""
    claims: tuple[ExpectedClaim, ...] = ()
    """The facts of the reference answer, searched in the response for completeness; claim
    ids are unique (they key the ``claims`` rows)."""

    @field_validator("claims")
    @classmethod
    def _unique_claim_ids(cls, claims: tuple[ExpectedClaim, ...]) -> tuple[ExpectedClaim, ...]:
        seen: set[str] = set()
        for claim in claims:
            if claim.id in seen:
                raise ValueError(f"duplicate claim id {claim.id!r}")
            seen.add(claim.id)
        return claims


class GroundTruthChunk(Frozen):
    """A passage of a source page that is known to be true."""

    chunk_id: str = Field(min_length=1)
    """Identifier of the passage, unique within the test case (for example ``p1#0``)."""
    page_url: str = ""
    """URL of the page the passage comes from."""
    text: str = Field(min_length=1)
    """The passage text."""


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
"""C0 and C1 control characters (newline, tab, escape, ...), refused in a case id."""


class TestCase(Frozen):
    """One case of a test set, in the native JSONL format (one object per line)."""

    __test__ = False  # not a pytest test class, despite the name

    id: str = Field(min_length=1)
    """Identifier of the case, unique within the test set; becomes ``sample_id``. No
    control characters: ids are printed in terminals and logs, where they could move the
    cursor or forge lines."""
    domain: str = ""
    """The website domain the question is about (``acme.com``); used for attribution."""
    query: str = Field(min_length=1)
    """The question put to the AI."""
    response: str | None = None
    """The recorded answer; optional when a target generates it."""
    ai_provider: str = ""
    """Who produced the recorded answer (``gpt-x``, ``claude``, ...)."""
    expected_answer: ExpectedAnswer = ExpectedAnswer()
    """The reference answer and its claims."""
    ground_truth: tuple[GroundTruthChunk, ...] = ()
    """Passages known to be true, with their page URLs."""
    context: tuple[str, ...] | None = None
    """Retrieved passages the answer was generated from; defaults to the ground-truth texts."""
    retrieved_context_ids: tuple[str, ...] | None = None
    """Ids (or URLs) of the retrieved passages in rank order, best first; when ``context``
    is given too, one id per passage of ``context``, in the same order. With ground truth
    it gives the retrieval metrics (Hit@k, MRR, NDCG@k, precision@k, recall@k)."""
    relevant_context_ids: tuple[str, ...] = ()
    """Ids (or URLs) of the passages a perfect retrieval returns; empty: the
    ``ground_truth`` chunk ids (or page URLs) are the relevant ones."""
    brand_names: tuple[str, ...] = ()
    """Brand and product names that count as attribution to the domain."""
    tags: tuple[str, ...] = ()
    """Free labels for filtering (``pricing``, ``support``)."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Anything else; kept with the case and available to templates."""
    tools_called: tuple[ToolCall, ...] = ()
    """The tool calls the agent made while answering (its trajectory), in order."""
    expected_tools: tuple[ExpectedTool, ...] | None = None
    """The tool calls a correct trajectory makes; null: the case has no tool expectation
    (no tool metrics). An empty list: a correct answer calls no tool."""
    expected_tools_ordered: bool = False
    """Whether the expected calls must be made in the order listed (order metrics are
    null when not)."""
    trajectory: tuple[TrajectoryStep, ...] = ()
    """The recorded steps (model turns and tool executions, in order, with timings) of a
    case imported from a production trace; empty for a written case (``tools_called``
    alone is what the metrics read)."""

    @field_validator("id")
    @classmethod
    def _printable_id(cls, value: str) -> str:
        if _CONTROL.search(value):
            raise ValueError("must not contain control characters (newline, tab, escape, ...)")
        return value

    @model_validator(mode="after")
    def _ids_match_context(self) -> TestCase:
        ids = self.retrieved_context_ids
        if ids is not None and self.context is not None and len(ids) != len(self.context):
            raise ValueError(
                f"retrieved_context_ids has {len(ids)} ids for {len(self.context)} context "
                "passages; give one id per passage, in the same order"
            )
        if self.expected_tools_ordered and self.expected_tools is None:
            raise ValueError("expected_tools_ordered is set but the case has no expected_tools")
        return self

    @property
    def effective_context(self) -> tuple[str, ...]:
        """The retrieved context, falling back to the ground-truth passages."""
        if self.context is not None:
            return self.context
        return tuple(chunk.text for chunk in self.ground_truth)


TurnRole = Literal["user", "assistant"]


class ConversationTurn(Frozen):
    """One turn of a multi-turn conversation (the eval-harness write-up's CSV row)."""

    turn: int = Field(ge=1)
    """Position in the conversation, from 1."""
    role: TurnRole
    """``user`` (a message to send) or ``assistant`` (a reply to generate and grade)."""
    content: str = ""
    """The user's message; for an assistant turn, a recorded reply, used as it is when the
    run has no target (``--target recorded``); a model or endpoint target generates every
    assistant turn."""
    expected: str = ""
    """What the assistant should do or say at this turn (its behavioural expectation)."""


class Conversation(Frozen):
    """A multi-turn test case: turns in order, graded turn by turn and as a whole."""

    id: str = Field(min_length=1)
    """Conversation id (``conversation_id``)."""
    scenario: str = ""
    """What the conversation is about, for people."""
    chatbot_role: str = ""
    """The role the assistant must keep (role adherence)."""
    turns: tuple[ConversationTurn, ...]
    """Turns ordered by ``turn``; at least one assistant turn, every user turn has text."""
