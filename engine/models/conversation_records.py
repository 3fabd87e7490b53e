"""Records of conversation test sets: one row per turn, one per conversation (lake and
warehouse tables ``turns`` and ``conversation_scores``, registered in ``LAKE_TABLES``)."""

from __future__ import annotations

from engine.models.base import Frozen


class TurnRecord(Frozen):
    """One turn of one conversation (a multi-turn test case) in one iteration: the text that
    was said and, for an assistant turn, how it was graded."""

    run_id: str
    """Run the row belongs to."""
    iteration: int
    """Iteration number."""
    sample_id: str
    """The conversation's id (``conversation_id``): the sample of a conversation test set."""
    candidate: str = ""
    """Candidate that produced the assistant turns (empty for the run's own target)."""
    turn: int
    """Position in the conversation, from 1."""
    role: str
    """``user`` or ``assistant``."""
    content: str
    """What was said: the user's message, or the assistant's reply (untrusted text)."""
    expected: str = ""
    """The assistant turn's behavioural expectation from the test set (empty when none)."""
    generated: bool = False
    """True when the target generated this reply in this run; False for user turns and
    recorded replies."""
    window_start: int | None = None
    """First turn of the sliding window the judge saw with this reply (the window ends at
    the turn before it); null for user turns."""
    expectation_score: float | None = None
    """How well the reply meets its expectation, 0-1; null without an expectation."""
    expectation_passed: bool | None = None
    """Whether the reply meets its expectation."""
    relevant: bool | None = None
    """Whether the reply is relevant to the window of turns before it."""
    in_role: bool | None = None
    """Whether the reply keeps the chatbot role; null when the conversation has none."""
    attrition: bool | None = None
    """True when the reply asks again for something the user already gave (knowledge
    attrition); null for user turns."""
    reason: str = ""
    """Why, in a sentence or two (the judge's words, or the local rules' figures)."""
    latency_ms: float | None = None
    """Time the target took for this reply (null for recorded replies)."""
    input_tokens: int | None = None
    """Tokens sent to the target for this reply (the whole history)."""
    output_tokens: int | None = None
    """Tokens the target produced for this reply."""
    cost_usd: float = 0.0
    """Cost of the target call of this reply, in US dollars."""


class ConversationScoreRecord(Frozen):
    """The conversation-level scores of one conversation in one iteration (DeepEval's
    conversational metrics, as the eval-harness write-up defines them), each 0-1."""

    run_id: str
    """Run the row belongs to."""
    iteration: int
    """Iteration number."""
    sample_id: str
    """The conversation's id (``conversation_id``)."""
    candidate: str = ""
    """Candidate that produced the assistant turns."""
    scenario: str = ""
    """What the conversation is about (from the test set)."""
    chatbot_role: str = ""
    """The role the assistant had to keep (from the test set; empty when none)."""
    turns: int
    """Turns in the conversation."""
    assistant_turns: int
    """Assistant turns graded."""
    window_size: int
    """Turns of history the judge saw with each reply (the sliding window)."""
    expectation_mean: float | None = None
    """Mean expectation score of the assistant turns that have an expectation, 0-1."""
    expectation_pass_rate: float | None = None
    """Share of those turns that met their expectation, 0-1."""
    relevancy: float | None = None
    """Conversation relevancy: relevant replies / assistant turns (sliding window)."""
    knowledge_retention: float | None = None
    """Knowledge retention: replies without attrition / assistant turns (full history)."""
    completeness: float | None = None
    """Conversation completeness: satisfied user intents / user intents."""
    role_adherence: float | None = None
    """Role adherence: in-role replies / assistant turns; null without a chatbot role."""
    intents: str = "[]"
    """The user intents found and whether each was satisfied, as JSON
    (``[{"intent": ..., "satisfied": true}]``)."""
    reason: str = ""
    """Why, per metric, in a few sentences."""
    judge: str
    """``local`` (the deterministic rules) or the LLM judge (``openai:MODEL``, ...)."""
