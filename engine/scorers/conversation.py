"""The conversation scorer: every assistant turn graded with its sliding window, then the
conversation-level metrics (``engine.scoring.conversation``).

A conversation test set's samples are conversations (``engine.testsets.conversations``);
its lanes answer them turn by turn (``engine.run.conversing``), and this scorer writes one
``turns`` row per turn and one ``conversation_scores`` row per conversation, in the same
commit as the conversation's ``results`` row. The run's judge grades: the local judge's
rules offline, or an LLM judge's conversation prompts (one call per assistant turn, one for
knowledge retention and one for completeness).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

from engine.judges.base import JudgeError, JudgeGaveUp, Usage
from engine.judges.conversation import (
    Completeness,
    ConversationJudge,
    Retention,
    Said,
    TurnVerdict,
)
from engine.models import (
    Conversation,
    ConversationScoreRecord,
    RunConfig,
    SampleKey,
    TestCase,
    TurnRecord,
)
from engine.pricing import model_prices
from engine.scorers.base import (
    AnswerEstimate,
    BaseScorer,
    CallEstimate,
    SampleInput,
    ScoreOutcome,
    ScorerContext,
    ScorerError,
    ScorerFactory,
    no_calls,
)
from engine.scorers.judge import (
    JUDGE_OUTPUT_TOKENS,
    PROMPT_OVERHEAD_TOKENS,
    TARGET_OUTPUT_TOKENS,
    tokens,
)
from engine.scorers.registry import register
from engine.scoring.conversation import (
    EXPECTATION_PASS_AT,
    LocalConversationJudge,
    ratio,
    window,
)
from engine.targets import TurnReply
from engine.testsets.conversations import case_conversation


def said_turns(conv: Conversation, replies: Sequence[TurnReply]) -> list[Said]:
    """The conversation as said in this run: user turns as written, assistant turns as
    answered (a turn the lane did not answer is an empty reply)."""
    by_turn = {r.turn: r.content for r in replies}
    return [
        Said(t.turn, t.role, t.content if t.role == "user" else by_turn.get(t.turn, ""), t.expected)
        for t in conv.turns
    ]


class ConversationScorer(BaseScorer):
    """Grades a conversation turn by turn and as a whole (see the module docstring)."""

    name = "conversation"
    tables = frozenset({"turns", "conversation_scores"})

    def __init__(self, judge: ConversationJudge, window_size: int) -> None:
        self._judge = judge
        self._window = window_size

    async def score(self, sample: SampleInput) -> ScoreOutcome:
        """Grade every assistant turn, then the whole conversation. A judge error is
        transient unless the judge's own client already retried it."""
        conv = case_conversation(sample.case)
        if conv is None:
            raise ScorerError(f"case {sample.case.id!r} is not a conversation")
        said = said_turns(conv, sample.turns)
        positions = [i for i, t in enumerate(said) if t.role == "assistant"]
        try:
            verdicts: list[TurnVerdict] = list(
                await asyncio.gather(
                    *(
                        self._judge.grade_turn(
                            conv.chatbot_role, window(said, i, self._window), said[i]
                        )
                        for i in positions
                    )
                )
            )
            retention, completeness = await asyncio.gather(
                self._judge.retention(said), self._judge.completeness(said)
            )
        except JudgeGaveUp as exc:
            raise ScorerError(f"{type(exc).__name__}: {exc}") from exc
        except JudgeError as exc:
            raise ScorerError(f"{type(exc).__name__}: {exc}", transient=True) from exc
        graded = {said[i].turn: (i, v) for i, v in zip(positions, verdicts, strict=True)}
        turn_rows = self._turn_rows(sample, said, graded, retention)
        summary = self._summary(sample.key, conv, said, verdicts, retention, completeness)
        usage = sum((v.usage for v in verdicts), Usage()) + retention.usage + completeness.usage
        return ScoreOutcome(
            records={"turns": turn_rows, "conversation_scores": [summary]}, usage=usage
        )

    def _turn_rows(
        self,
        sample: SampleInput,
        said: Sequence[Said],
        graded: dict[int, tuple[int, TurnVerdict]],
        retention: Retention,
    ) -> list[TurnRecord]:
        replies = {r.turn: r for r in sample.turns}
        rows = []
        for t in said:
            base: dict[str, Any] = {**sample.key.model_dump(), "turn": t.turn, "role": t.role,
                                    "content": t.content, "expected": t.expected}  # fmt: skip
            if t.turn in graded:
                position, verdict = graded[t.turn]
                reply = replies.get(t.turn)
                passed = None
                if verdict.expectation_score is not None:
                    passed = verdict.expectation_score >= EXPECTATION_PASS_AT
                base.update(
                    generated=reply.generated if reply else False,
                    window_start=said[max(0, position - self._window)].turn if position else None,
                    expectation_score=verdict.expectation_score,
                    expectation_passed=passed,
                    relevant=verdict.relevant,
                    in_role=verdict.in_role,
                    attrition=t.turn in retention.attrition,
                    reason=_turn_reason(verdict.reason, t.turn, retention),
                    latency_ms=reply.latency_ms if reply else None,
                    input_tokens=reply.input_tokens if reply else None,
                    output_tokens=reply.output_tokens if reply else None,
                    cost_usd=reply.cost_usd if reply else 0.0,
                )
            rows.append(TurnRecord(**base))
        return rows

    def _summary(
        self,
        key: SampleKey,
        conv: Conversation,
        said: Sequence[Said],
        verdicts: Sequence[TurnVerdict],
        retention: Retention,
        completeness: Completeness,
    ) -> ConversationScoreRecord:
        n = len(verdicts)
        scored = [v.expectation_score for v in verdicts if v.expectation_score is not None]
        in_role = [v.in_role for v in verdicts if v.in_role is not None]
        intents = completeness.intents
        reasons = [
            f"relevancy: {sum(v.relevant for v in verdicts)} of {n} replies relevant to their "
            f"window of {self._window} turns",
            f"knowledge retention: {retention.reason}",
            f"completeness: {completeness.reason}",
        ]
        if conv.chatbot_role.strip():
            reasons.append(f"role adherence: {sum(in_role)} of {len(in_role)} replies in role")
        return ConversationScoreRecord(
            **key.model_dump(),
            scenario=conv.scenario,
            chatbot_role=conv.chatbot_role,
            turns=len(said),
            assistant_turns=n,
            window_size=self._window,
            expectation_mean=sum(scored) / len(scored) if scored else None,
            expectation_pass_rate=ratio(sum(s >= EXPECTATION_PASS_AT for s in scored), len(scored)),
            relevancy=ratio(sum(v.relevant for v in verdicts), n),
            knowledge_retention=ratio(n - len(retention.attrition), n),
            completeness=ratio(sum(i.satisfied for i in intents), len(intents)),
            role_adherence=ratio(sum(in_role), len(in_role)) if in_role else None,
            intents=json.dumps(
                [{"intent": i.text, "satisfied": i.satisfied} for i in intents], ensure_ascii=False
            ),
            reason="; ".join(reasons),
            judge=self._judge.name,
        )


def _turn_reason(verdict: str, turn: int, retention: Retention) -> str:
    """The verdict's reason, and the attrition's when the turn shows one."""
    if turn not in retention.attrition:
        return verdict
    why = retention.why.get(turn) or retention.reason
    return f"{verdict}; knowledge attrition: {why}" if verdict else f"knowledge attrition: {why}"


def conversation_judge(judge: Any, embedder: Any) -> ConversationJudge:
    """The run's judge for conversations: an LLM judge's conversation calls, else the local
    rules with the run's embedder."""
    if judge is not None and judge.name != "local" and hasattr(judge, "grade_turn"):
        return judge  # type: ignore[no-any-return]
    return LocalConversationJudge(embedder)


def _build(context: ScorerContext) -> ConversationScorer:
    parts = context.parts
    judge = conversation_judge(parts.judge, parts.embedder)
    return ConversationScorer(judge, context.config.conversation_window)


def estimate_conversation(config: RunConfig) -> AnswerEstimate:
    """What the judge spends on one conversation: one call per assistant turn (its window
    and reply), one for retention and one for completeness (the whole transcript each)."""
    if config.judge == "local":
        return no_calls(config)
    price_in, price_out = model_prices(config.judge, config.prices)

    def per_answer(case: TestCase, response: str | None) -> CallEstimate:
        conv = case_conversation(case)
        if conv is None:
            return CallEstimate()
        sizes = [
            tokens(t.content) if t.role == "user" or t.content else TARGET_OUTPUT_TOKENS
            for t in conv.turns
        ]
        sent = 0
        calls = 0
        for i, t in enumerate(conv.turns):
            if t.role == "assistant":
                seen = sizes[max(0, i - config.conversation_window) : i + 1]
                sent += PROMPT_OVERHEAD_TOKENS + sum(seen) + tokens(t.expected or " ")
                calls += 1
        sent += 2 * (PROMPT_OVERHEAD_TOKENS + sum(sizes))
        calls += 2
        received = calls * JUDGE_OUTPUT_TOKENS
        return CallEstimate(calls, sent, received, (sent * price_in + received * price_out) / 1e6)

    return per_answer


register(ScorerFactory("conversation", _build, estimate_conversation, samples="conversations"))
