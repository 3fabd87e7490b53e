"""Multi-turn test sets: the eval-harness write-up's conversation CSV and a JSONL form.

CSV (one row per turn; the write-up's "Dataset Format: Multi-Turn CSV")::

    "conversation_id","turn","role","content","expected_output"
    "delayed-shipment","1","user","Hi, my order #12345 hasn't arrived yet",""
    "delayed-shipment","2","assistant","","Acknowledge the order number and ask about the timeline"

Optional columns ``scenario`` and ``chatbot_role`` (the first non-empty value of a
conversation counts). JSONL (one conversation per line; the write-up's JSON form)::

    {"id": "delayed-shipment", "scenario": "...", "chatbot_role": "...",
     "turns": [{"role": "user", "content": "..."}, {"role": "assistant", "expected": "..."}]}

where ``conversation_id`` may stand for ``id``, ``expected_output`` for ``expected``, and a
turn's number is its position. A conversation with any bad row is skipped whole (a partial
conversation would change every later turn's history); each problem names its file and
line. A file without one usable conversation is refused.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from engine.models import Conversation
from engine.testsets.base import MAX_ROW_BYTES, Problem, Row, TestSetError
from engine.testsets.reading import decode, parse_csv, parse_jsonl, read_bytes

CSV_COLUMNS = ("conversation_id", "turn", "role")
"""Columns that make a CSV a conversation file (the write-up's detection rule)."""


@dataclass(frozen=True)
class LoadedConversations:
    """A parsed conversation file: the usable conversations and the skipped ones' problems."""

    path: Path
    format: str
    """``conversations-csv`` or ``conversations-jsonl``."""
    sha256: str
    conversations: tuple[Conversation, ...]
    problems: tuple[Problem, ...] = ()


def is_conversation_header(columns: Sequence[str]) -> bool:
    """Whether a CSV header is the write-up's multi-turn format."""
    names = {c.strip().lower() for c in columns}
    return all(c in names for c in CSV_COLUMNS)


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _check(conv: Conversation) -> str | None:
    numbers = [t.turn for t in conv.turns]
    if len(set(numbers)) != len(numbers):
        twice = sorted({n for n in numbers if numbers.count(n) > 1})
        return f"turn number{'s' if len(twice) > 1 else ''} {twice} given twice"
    if not any(t.role == "assistant" for t in conv.turns):
        return "no assistant turn to evaluate"
    empty = [t.turn for t in conv.turns if t.role == "user" and not t.content.strip()]
    if empty:
        return f"user turn {empty[0]} has no content"
    return None


def _build(fields: dict[str, Any]) -> tuple[Conversation | None, str]:
    try:
        conv = Conversation.model_validate(fields)
    except ValidationError as err:
        first = err.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        return None, f"{where}: {first['msg']}"
    conv = conv.model_copy(update={"turns": tuple(sorted(conv.turns, key=lambda t: t.turn))})
    why = _check(conv)
    return (None, why) if why else (conv, "")


def _from_csv(name: str, rows: list[Row]) -> tuple[list[Conversation], list[Problem]]:
    groups: dict[str, list[Row]] = {}
    for row in rows:
        values = {k.strip().lower(): v for k, v in row.value.items()}
        groups.setdefault(_text(values.get("conversation_id")).strip(), []).append(
            Row(row.line, row.size, values, row.index, row.container)
        )
    out: list[Conversation] = []
    problems: list[Problem] = []
    for cid, group in groups.items():
        first = group[0].line
        if not cid:
            problems += [Problem(name, r.line, "conversation_id is empty") for r in group]
            continue
        turns: list[dict[str, Any]] = []
        bad = False
        for r in group:
            raw = _text(r.value.get("turn")).strip()
            if not raw.isdigit():
                problems.append(Problem(name, r.line, f"turn {raw!r} is not a whole number"))
                bad = True
                continue
            role = _text(r.value.get("role")).strip().lower()
            turns.append(
                {"turn": int(raw), "role": role, "content": _text(r.value.get("content")),
                 "expected": _text(r.value.get("expected_output"))}
            )  # fmt: skip
        if bad:
            continue
        meta = {k: next((_text(r.value.get(k)) for r in group if r.value.get(k)), "")
                for k in ("scenario", "chatbot_role")}  # fmt: skip
        conv, why = _build({"id": cid, **meta, "turns": turns})
        if conv is None:
            problems.append(Problem(name, first, f"conversation {cid!r}: {why}; skipped"))
        else:
            out.append(conv)
    return out, problems


def _from_jsonl(name: str, rows: list[Row]) -> tuple[list[Conversation], list[Problem]]:
    out: list[Conversation] = []
    problems: list[Problem] = []
    for row in rows:
        v = row.value
        cid = _text(v.get("id", v.get("conversation_id"))).strip()
        turns = v.get("turns")
        if not isinstance(turns, list) or not all(isinstance(t, dict) for t in turns):
            problems.append(Problem(name, row.line, "'turns' must be a list of objects"))
            continue
        fields = {
            "id": cid,
            "scenario": _text(v.get("scenario")),
            "chatbot_role": _text(v.get("chatbot_role")),
            "turns": [
                {"turn": i, "role": _text(t.get("role")).strip().lower(),
                 "content": _text(t.get("content")),
                 "expected": _text(t.get("expected", t.get("expected_output")))}
                for i, t in enumerate(turns, start=1)
            ],
        }  # fmt: skip
        conv, why = _build(fields)
        if conv is None:
            problems.append(Problem(name, row.line, f"conversation {cid!r}: {why}; skipped"))
        else:
            out.append(conv)
    return out, problems


def load_conversations(path: Path) -> LoadedConversations:
    """Read a conversation CSV or JSONL file. Raises TestSetError when nothing is usable
    (the message lists every problem)."""
    name = str(path)
    raw = read_bytes(path, name)
    text = decode(name, raw)
    if path.suffix.lower() in (".csv", ".tsv"):
        delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
        container = parse_csv(name, text, MAX_ROW_BYTES, delimiter)
        if not is_conversation_header(container.header):
            raise TestSetError(
                f"{name}: not a conversation CSV: the header needs the columns "
                f"{', '.join(CSV_COLUMNS)} (found {', '.join(container.header) or 'none'})"
            )
        found, problems = _from_csv(name, container.rows)
        kind = "conversations-csv"
    else:
        container = parse_jsonl(name, text, MAX_ROW_BYTES)
        found, problems = _from_jsonl(name, container.rows)
        kind = "conversations-jsonl"
    problems = [*container.problems, *problems]
    ids = [c.id for c in found]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        problems.append(Problem(name, 0, f"conversation ids given twice: {twice}; skipped"))
        found = [c for c in found if c.id not in twice]
    if not found:
        lines = "\n".join(str(p) for p in problems)
        raise TestSetError(f"{name}: no usable conversation" + (f"\n{lines}" if lines else ""),
                           problems)  # fmt: skip
    digest = hashlib.sha256(raw).hexdigest()
    return LoadedConversations(path, kind, digest, tuple(found), tuple(problems))
