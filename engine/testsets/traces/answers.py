"""The recorded answer inside a trace's structured output.

An application's output is often an object: ``{"answer": ...}``, a chat message, an OpenAI
chat completion (``choices[0].message.content``), a legacy completion
(``choices[0].text``), a Responses-API object (``output_text``, or ``output[].content[]``
parts), an Anthropic message (``content`` parts). The answer is read from one of those
known fields; an object with none of them is refused with its reason, never stored whole
as the "answer": a trace's output may carry request headers, tool results or debug state
(an ``Authorization`` header among them) that must not reach the lake, and a JSON blob
scored as an answer is noise anyway.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.testsets.base import RowError

ANSWER_FIELDS = ("answer", "output_text", "output", "response", "completion", "text", "content")
"""Keys of an output object that hold the answer, in order (a chat message's ``content``
last: it is also where an Anthropic message keeps its parts)."""

KNOWN = "answer, output, response, text, content, choices[0].message.content"
"""The fields a refusal names, so the reader knows what would have been taken."""

_NESTING = 6
"""How deep the known fields are followed (``{"output": {"message": {"content": ...}}}``
is three); deeper is not an answer anyone wrote on purpose."""


class NoAnswerField(RowError):
    """A structured output without a known answer field."""


def answer_of(value: Any, field: str) -> str:
    """The answer in ``value`` ('' when absent); ``NoAnswerField`` naming ``field`` for an
    object or list that holds no known answer field."""
    if value is None or isinstance(value, bool):
        return ""
    if isinstance(value, str | int | float):
        return str(value)
    found = _find(value, _NESTING)
    if found is None:
        raise NoAnswerField(
            f"'{field}' is {'an object' if isinstance(value, Mapping) else 'a list'} "
            f"without a known answer field ({KNOWN})"
        )
    return found


def _find(value: Any, depth: int) -> str | None:
    """The text at a known answer field of ``value``; None when there is none."""
    if depth <= 0:
        return None
    if isinstance(value, str):
        return value if value.strip() else None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, list):
        return _from_list(value, depth)
    if not isinstance(value, Mapping):
        return None
    choices = value.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
        first = choices[0]  # an OpenAI (or compatible) completion: the first choice
        for key in ("message", "delta", "text"):
            found = _find(first.get(key), depth - 1)
            if found is not None:
                return found
        return None
    if "message" in value and isinstance(value["message"], Mapping):
        return _find(value["message"], depth - 1)
    for key in ANSWER_FIELDS:
        if key in value:
            found = _find(value[key], depth - 1)
            if found is not None:
                return found
    return None


def _from_list(items: list[Any], depth: int) -> str | None:
    """Messages: the last assistant one; content parts: their text joined."""
    roles = [i for i in items if isinstance(i, Mapping) and "role" in i]
    if roles:
        said = [m for m in roles if str(m.get("role")) in ("assistant", "ai", "model")]
        return _find(said[-1], depth - 1) if said else None
    texts = []
    for item in items:
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(item, Mapping) and item.get("type", "text") in ("text", "output_text"):
            found = _find(item, depth - 1)
            if found is not None:
                texts.append(found)
        elif isinstance(item, Mapping) and item.get("type") == "message":
            found = _find(item.get("content"), depth - 1)  # a Responses-API output item
            if found is not None:
                texts.append(found)
    joined = "\n".join(t for t in texts if t.strip())
    return joined or None
