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

from engine.models import Conversation, TestCase
from engine.testsets.base import MAX_ROW_BYTES, LoadedTestSet, Problem, Row, TestSetError
from engine.testsets.reading import decode, parse_csv, parse_jsonl, read_bytes

CSV_COLUMNS = ("conversation_id", "turn", "role")
"""Columns that make a CSV a conversation file (the write-up's detection rule)."""

REQUIRED_COLUMNS = ("conversation_id", "turn", "role", "content")
"""Columns a conversation CSV must have (``expected_output`` may be left out: such a
conversation is graded on the conversation-level metrics only)."""

ROLES = ("user", "assistant")


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


def _gap(numbers: list[int]) -> int | None:
    """The first turn number missing from 1..max (a CSV's turns must go 1, 2, 3, ...: a
    missing row would silently change the history of every later turn)."""
    expected = 1
    for n in numbers:
        if n > expected:
            return expected
        expected = n + 1
    return None


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
        lines: dict[int, int] = {}
        bad = False
        for r in group:
            raw = _text(r.value.get("turn")).strip()
            if not raw.isdigit():
                problems.append(Problem(name, r.line, f"turn {raw!r} is not a whole number"))
                bad = True
                continue
            role = _text(r.value.get("role")).strip().lower()
            if role not in ROLES:
                problems.append(
                    Problem(name, r.line, f"role {role!r} is not one of {', '.join(ROLES)}")
                )
                bad = True
                continue
            lines.setdefault(int(raw), r.line)
            turns.append(
                {"turn": int(raw), "role": role, "content": _text(r.value.get("content")),
                 "expected": _text(r.value.get("expected_output"))}
            )  # fmt: skip
        gap = _gap(sorted(lines))
        if not bad and gap is not None:
            after = min(n for n in lines if n > gap)
            problems.append(
                Problem(name, lines[after], f"conversation {cid!r}: turn {gap} is missing "
                        f"(turn {after} follows turn {gap - 1}); skipped")
            )  # fmt: skip
            continue
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
        header = {c.strip().lower() for c in container.header}
        missing = [c for c in REQUIRED_COLUMNS if c not in header]
        if "conversation_id" in header and missing:
            raise TestSetError(f"{name}: line 1: missing column(s) {', '.join(missing)}")
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


def looks_like_conversations(kind: str, header: Sequence[str], first: Any) -> bool:
    """Whether a parsed test-set file is a conversation file: a CSV whose header has
    ``conversation_id`` (its other columns are then checked by ``load_conversations``), or
    JSON lines whose first object has a ``turns`` list."""
    if kind == "csv":
        return "conversation_id" in {c.strip().lower() for c in header}
    return kind == "jsonl" and isinstance(first, dict) and isinstance(first.get("turns"), list)


def conversation_case(conv: Conversation, domain: str) -> TestCase:
    """The sample a conversation is in a run: its id, its scenario (else its first user
    message) as the query, and the conversation itself in ``metadata["conversation"]``,
    which the run's lanes and the conversation scorer read."""
    first_user = next((t.content for t in conv.turns if t.role == "user"), "")
    query = conv.scenario.strip() or first_user.strip() or conv.id
    return TestCase(
        id=conv.id,
        domain=domain,
        query=query,
        tags=("conversation",),
        metadata={"conversation": conv.model_dump(mode="json")},
    )


def case_conversation(case: TestCase) -> Conversation | None:
    """The conversation a case carries (``conversation_case``), or None for a plain case."""
    raw = case.metadata.get("conversation")
    return Conversation.model_validate(raw) if isinstance(raw, dict) else None


def conversation_test_set(path: Path) -> LoadedTestSet:
    """A conversation file as a test set for ``evalhouse run``. Strict: any bad row refuses
    the file (a skipped conversation would be a silent hole in a comparison), in one line
    naming the file and line when there is one problem."""
    try:
        loaded = load_conversations(path)
    except TestSetError as exc:
        if len(exc.problems) == 1:
            only = exc.problems[0]
            only = Problem(only.file, only.line, only.reason.removesuffix("; skipped"))
            raise TestSetError(f"{path}: refused: {only}", exc.problems) from None
        raise
    if loaded.problems:
        problems = tuple(Problem(p.file, p.line, p.reason.removesuffix("; skipped"))
                         for p in loaded.problems)  # fmt: skip
        if len(problems) == 1:
            raise TestSetError(f"{path}: refused: {problems[0]}", problems)
        shown = "\n".join(f"  {p}" for p in problems[:20])
        raise TestSetError(f"{path}: refused: {len(problems)} problem(s)\n{shown}", problems)
    cases = tuple(conversation_case(c, path.stem) for c in loaded.conversations)
    return LoadedTestSet(path, loaded.format, loaded.sha256, cases)
