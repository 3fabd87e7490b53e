"""A conversation answered turn by turn (the eval-harness write-up's ``runConversation``).

User turns are added to the history; each assistant turn is answered by the lane's target
with the whole history so far (``metadata["messages"]`` of a per-turn case, which the
``openai:MODEL`` target and a candidate's chat target send as chat messages, and an
``http:URL`` or http_endpoint candidate's body template can send with
``"{{metadata.messages}}"``), and the reply joins the history. With the ``recorded``
target the test set's own assistant turns are used as they are.

Crash safety per turn: every generated reply is appended to a journal file (one JSON line,
fsynced) before the next turn is asked, so a run killed mid-conversation and resumed asks
the target only for the turns it had not answered; the conversation's rows are still
written once, with its result (the lake's commit protocol, ``engine.run.writer``).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

from engine.models import Conversation, SampleKey, TestCase
from engine.targets import Target, TargetError, TargetResponse, TurnReply

RECORDED = "recorded"


class TurnJournal:
    """Generated replies of unfinished conversations, one JSONL file per conversation,
    lane and iteration under the run's progress folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path(self, key: SampleKey) -> Path:
        """The journal file of one conversation in one iteration and lane."""
        name = hashlib.sha256(f"{key.candidate}/{key.sample_id}".encode()).hexdigest()[:24]
        return self.folder / key.run_id / f"iteration-{key.iteration}" / "turns" / f"{name}.jsonl"

    def read(self, key: SampleKey) -> dict[int, TurnReply]:
        """Replies already generated, by turn; a torn last line (a kill mid-write) is
        ignored, and that turn asked again."""
        path = self.path(key)
        if not path.is_file():
            return {}
        out: dict[int, TurnReply] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                raw = json.loads(line)
                reply = TurnReply(**raw)
            except (json.JSONDecodeError, TypeError):
                continue
            out[reply.turn] = reply
        return out

    def append(self, key: SampleKey, reply: TurnReply) -> None:
        """Record one generated reply durably before the conversation goes on."""
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps(asdict(reply), ensure_ascii=False) + "\n"
        with path.open("a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())


def turn_case(
    case: TestCase, conv: Conversation, turn: int, history: list[dict[str, str]]
) -> TestCase:
    """The case a target answers for one assistant turn: the last user message as the query
    and the history (``{"role", "content"}`` messages, oldest first) in the metadata."""
    last_user = next((m["content"] for m in reversed(history) if m["role"] == "user"), "")
    return TestCase(
        id=f"{case.id}#{turn}",
        domain=case.domain,
        query=last_user or conv.scenario or conv.id,
        metadata={
            "messages": [dict(m) for m in history],
            "chatbot_role": conv.chatbot_role,
            "conversation_id": conv.id,
            "turn": turn,
        },
    )


def transcript(conv: Conversation, replies: dict[int, str]) -> str:
    """The conversation as text, one ``role: content`` paragraph per turn."""
    lines = []
    for t in conv.turns:
        text = t.content if t.role == "user" else replies.get(t.turn, "")
        lines.append(f"{t.role}: {text}")
    return "\n\n".join(lines)


async def converse(
    case: TestCase,
    conv: Conversation,
    target: Target,
    journal: TurnJournal | None,
    key: SampleKey,
) -> TargetResponse:
    """Answer every assistant turn of ``conv`` in order. Raises TargetError naming the turn
    that could not be answered (the replies before it stay in the journal)."""
    recorded = target.name == RECORDED
    done = journal.read(key) if journal is not None and not recorded else {}
    history: list[dict[str, str]] = []
    replies: list[TurnReply] = []
    for t in conv.turns:
        if t.role == "user":
            history.append({"role": "user", "content": t.content})
            continue
        if recorded:
            if not t.content.strip():
                raise TargetError(
                    f"conversation {conv.id!r} turn {t.turn} has no recorded reply; fill its "
                    "content or run with a target (--target openai:MODEL or http:URL)"
                )
            reply = TurnReply(turn=t.turn, content=t.content)
        elif t.turn in done:
            reply = done[t.turn]
        else:
            reply = await _ask(target, turn_case(case, conv, t.turn, history), t.turn)
            if journal is not None:
                journal.append(key, reply)
        history.append({"role": "assistant", "content": reply.content})
        replies.append(reply)
    return _response(conv, replies)


async def _ask(target: Target, step: TestCase, turn: int) -> TurnReply:
    try:
        answer = await target.respond(step)
    except TargetError as exc:
        raise TargetError(f"turn {turn}: {exc}") from exc
    return TurnReply(
        turn=turn,
        content=answer.text,
        generated=True,
        latency_ms=answer.latency_ms,
        input_tokens=answer.input_tokens,
        output_tokens=answer.output_tokens,
        cost_usd=answer.cost_usd,
        calls=answer.calls,
    )


def _total(values: list[Any]) -> Any:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _response(conv: Conversation, replies: list[TurnReply]) -> TargetResponse:
    return TargetResponse(
        text=transcript(conv, {r.turn: r.content for r in replies}),
        latency_ms=_total([r.latency_ms for r in replies]),
        input_tokens=_total([r.input_tokens for r in replies]),
        output_tokens=_total([r.output_tokens for r in replies]),
        cost_usd=sum(r.cost_usd for r in replies),
        calls=sum(r.calls for r in replies),
        turns=tuple(replies),
    )
