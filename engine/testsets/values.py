"""Cell and key values as peers write them: text, lists in every encoding, objects, URLs.

A list (contexts, reference contexts, brand names, tags) may arrive as a JSON list, a JSON
array written as text (a CSV cell), the Python repr pandas writes (``['a', 'b']``), numpy's
repr without commas (``['a' 'b']``, HF ``datasets``), a double-encoded JSON string
(``"[\\"a\\"]"``), a list holding one encoded list, text with one item per line (blank
lines separating items when there are any), or, for a writer that joins lists with a
delimiter (DeepEval), text joined with it. ``list_value`` accepts all of them.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from engine.files import json_loads
from engine.testsets.base import Row, RowError

TEXT_KEYS = ("text", "content", "passage", "chunk", "page_content")
"""Keys whose string is the passage of a context object."""

PROMPT_KEYS = ("question", "query", "user_input", "input", "prompt", "text", "content")
"""Keys of an input object (Langfuse, Phoenix) that hold the question, in order."""

ANSWER_KEYS = ("answer", "expected_output", "reference", "output", "response", "text")
"""Keys of an output object that hold the answer, in order."""

_URL = re.compile(r"https?://[^\s<>\"'`()\[\]{}]{1,2000}", re.IGNORECASE)
_INDEX_COLUMN = re.compile(r"^unnamed: ?\d+$", re.IGNORECASE)


def is_index_column(name: str) -> bool:
    """A pandas index written to CSV: an empty header or ``Unnamed: 0``."""
    return not name.strip() or bool(_INDEX_COLUMN.match(name.strip()))


def is_blank(value: Any) -> bool:
    """None, an empty string, or whitespace."""
    return value is None or (isinstance(value, str) and not value.strip())


def text(value: Any, field: str, *, required: bool = False) -> str:
    """A scalar as text; objects and lists are refused with the field's name."""
    if value is None:
        if required:
            raise RowError(f"missing '{field}'")
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise RowError(f"'{field}' must be text, got {type(value).__name__}")
    out = str(value)
    if required and not out.strip():
        raise RowError(f"'{field}' is empty")
    return out


def optional_text(value: Any, field: str) -> str | None:
    """Text, or None when blank (an absent response stays absent)."""
    return None if is_blank(value) else text(value, field)


_QUOTED = re.compile(r"""\s*('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")\s*""", re.DOTALL)


def _numpy_repr(text: str) -> list[str] | None:
    """The items of numpy's repr of a string array, quoted items separated by white space
    and no commas (``['first passage' 'second passage']``, as HF ``datasets`` writes lists
    to CSV); None when ``text`` is not one."""
    if not (text.startswith("[") and text.endswith("]")):
        return None
    inner, items, at = text[1:-1], [], 0
    while at < len(inner):
        match = _QUOTED.match(inner, at)
        if match is None or match.end() == at:
            return None
        try:
            items.append(str(ast.literal_eval(match.group(1))))
        except (ValueError, SyntaxError):
            return None
        at = match.end()
    return items if len(items) > 1 else None


def _decoded(cell: str) -> Any:
    """JSON, then the Python repr, then numpy's repr, of a text cell; the text itself when
    none parses. Decoding goes on to the bottom: a JSON string holding an encoded list, at
    any depth, and a list whose one item is itself an encoded list, are that list."""
    stripped = cell.strip()
    try:
        value = json_loads(stripped)
    except json.JSONDecodeError:
        if stripped[:1] not in "[(":
            return cell
        # Before the Python repr: Python reads numpy's "['a' 'b']" as one glued string.
        items = _numpy_repr(stripped)
        if items is not None:
            return items
        try:
            value = ast.literal_eval(stripped)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return cell
    if isinstance(value, str) and value.strip()[:1] in ('"', "["):
        # Encoded more than once: a JSON string holding a list, or a string holding that.
        inner = _decoded(value)
        if value.strip()[:1] == "[" or isinstance(inner, list | tuple):
            return inner
    if (
        isinstance(value, list | tuple)
        and len(value) == 1
        and isinstance(value[0], str)
        and value[0].strip()[:1] == "["
    ):
        inner = _decoded(value[0])  # a list holding one encoded list (RAGAS, Python+JSON)
        if isinstance(inner, list | tuple):
            return inner
    return value


def list_value(value: Any, field: str, *, delimiter: str | None = None) -> list[Any] | None:
    """A list in any of the encodings of the module docstring; None when blank.

    ``delimiter`` is for a writer that joins a list into one text with it (DeepEval's
    ``save_as`` CSV and JSONL, with ``|``): a cell that is not an encoded list is then
    split there and only there, never at a newline, as ``joined_items`` says.
    """
    if value is None:
        return None
    if isinstance(value, list | tuple):
        return list(value)
    if not isinstance(value, str):
        raise RowError(f"'{field}' must be a list, got {type(value).__name__}")
    if not value.strip():
        return None
    decoded = _decoded(value)
    if isinstance(decoded, list | tuple):
        return list(decoded)
    if delimiter:
        # The writer's own text, whatever JSON makes of it: a passage that reads as a
        # number, a quoted string or an object stays the text the writer joined.
        return joined_items(value, delimiter)
    if isinstance(decoded, str):
        cell = decoded
        if _meant_as_list(cell):
            raise RowError(f"'{field}' is not a JSON or Python list")
        if "\n" in cell.strip():
            parts = re.split(r"\n\s*\n" if re.search(r"\n\s*\n", cell) else r"\n", cell)
            return [p.strip() for p in parts if p.strip()]
        return [cell]
    if isinstance(decoded, dict):
        return [decoded]
    return [str(decoded)]


_LIST_OPENING = re.compile(r"""\[\s*(?:['"\[\]]|$)""")


def _meant_as_list(cell: str) -> bool:
    """Text that opens like a list (``['``, ``["``, ``[[``, ``[]``), is bracketed whole or
    never closes its bracket, but did not parse: a broken or truncated list, refused rather
    than taken as one passage. A passage that starts with a closed bracket (``[1] See the
    FAQ``) is text."""
    stripped = cell.strip()
    if not stripped.startswith("["):
        return False
    return stripped.endswith("]") or "]" not in stripped or bool(_LIST_OPENING.match(stripped))


def joined_items(cell: str, delimiter: str) -> list[str]:
    """The items of a list its writer joined with ``delimiter`` and nothing around it
    (``"|".join(passages)``, as DeepEval does), read back without a blank item.

    A delimiter with white space on both sides is not a join but the passage's own text
    (``Plans: Basic | Pro``, a Markdown table): the writer puts nothing around its
    delimiter, and a passage seldom both ends and starts with white space. DeepEval's
    own loader splits there too, losing such a passage; this keeps it whole.
    """
    items, start = [], 0
    at = cell.find(delimiter)
    while at >= 0:
        end = at + len(delimiter)
        spaced = cell[at - 1 : at].isspace() and cell[end : end + 1].isspace()
        if not spaced:
            items.append(cell[start:at])
            start = end
        at = cell.find(delimiter, end)
    items.append(cell[start:])
    return [item.strip() for item in items if item.strip()]


def render_context_object(obj: Mapping[str, Any]) -> str:
    """A context object as prose: its passage key, else ``key: value`` lines."""
    for key in TEXT_KEYS:
        if isinstance(obj.get(key), str) and obj[key].strip():
            return str(obj[key])
    lines = []
    for key, value in obj.items():
        if isinstance(value, list):
            parts = [
                v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, sort_keys=True)
                for v in value
            ]
            lines.append(f"{key}: {'; '.join(parts)}")
        elif isinstance(value, dict):
            lines.append(f"{key}: {json.dumps(value, ensure_ascii=False, sort_keys=True)}")
        else:
            lines.append(f"{key}: {value}")
    return "\n".join(lines)


def context_items(
    value: Any, field: str, *, delimiter: str | None = None
) -> tuple[str, ...] | None:
    """Passages from a list of strings or objects in any encoding; None when absent."""
    if isinstance(value, dict):
        return (render_context_object(value),)
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise RowError(
            f"'{field}' must be a list of strings or objects, got {type(value).__name__}"
        )
    items = list_value(value, field, delimiter=delimiter)
    if items is None:
        return None
    out = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            if item.strip():
                out.append(item)
        elif isinstance(item, dict):
            out.append(render_context_object(item))
        elif isinstance(item, int | float) and not isinstance(item, bool):
            out.append(str(item))
        else:
            raise RowError(
                f"'{field}[{i}]' must be a string or an object, got {type(item).__name__}"
            )
    return tuple(out)


def string_list(value: Any, field: str) -> tuple[str, ...]:
    """Brand names or tags: a list in any encoding, or one comma-separated string."""
    if isinstance(value, str) and value.strip()[:1] not in "[\"'" and "\n" not in value:
        return tuple(p.strip() for p in value.split(",") if p.strip())
    items = list_value(value, field) or []
    return tuple(str(i).strip() for i in items if str(i).strip())


def metadata_value(value: Any, field: str = "metadata") -> dict[str, Any]:
    """A metadata object, or JSON text of one (the Python repr is accepted too). Metadata
    of another shape is kept, not refused: a list is ``{"items": [...]}`` (RAGAS 0.1 test
    sets hold a list there), a scalar or unparsable text ``{"value": ...}``."""
    if is_blank(value):
        return {}
    if isinstance(value, dict):
        return dict(value)
    parsed: Any = value
    if isinstance(value, str):
        try:
            parsed = json_loads(value)
        except json.JSONDecodeError as exc:
            if exc.msg.startswith("nested too deeply") or "integer of over" in exc.msg:
                raise RowError(f"'{field}' is not valid JSON ({exc.msg})") from exc
            try:
                parsed = ast.literal_eval(value.strip())
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                parsed = value
    if isinstance(parsed, dict):
        return parsed
    if isinstance(parsed, list | tuple):
        return {"items": list(parsed)}
    return {"value": parsed}


def row_id(row: Row, *keys: str) -> str:
    """The row's own id (first non-blank of ``keys``, default ``id``), else ``row-N``."""
    for key in keys or ("id",):
        explicit = row.value.get(key)
        if not is_blank(explicit) and not isinstance(explicit, dict | list):
            return str(explicit).strip()
    return f"row-{row.index}"


def prompt_text(value: Any, field: str) -> str:
    """The question in an input that may be text or an object (Langfuse, Phoenix).

    An object gives its first question-like key, else the last user message of a
    ``messages`` list, else (one key only) that key's text.
    """
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return text(value, field, required=True)
    if isinstance(value, list):
        value = {"messages": value}
    if not isinstance(value, dict):
        raise RowError(f"missing '{field}'" if value is None else f"'{field}' has no question")
    for key in PROMPT_KEYS:
        if isinstance(value.get(key), str) and value[key].strip():
            return str(value[key])
    messages = value.get("messages")
    if isinstance(messages, list):
        for message in reversed(messages):
            if isinstance(message, dict) and message.get("role") in ("user", "human"):
                content = message.get("content")
                if isinstance(content, str) and content.strip():
                    return content
    strings = [v for v in value.values() if isinstance(v, str) and v.strip()]
    if len(strings) == 1:
        return strings[0]
    raise RowError(
        f"'{field}' is an object without a question key ({', '.join(PROMPT_KEYS[:4])}, "
        "messages); name the key with --map"
    )


def answer_text(value: Any, field: str) -> str:
    """An expected or actual output that may be text or an object; '' when absent."""
    if is_blank(value):
        return ""
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, dict):
        for key in ANSWER_KEYS:
            if isinstance(value.get(key), str | int | float) and not is_blank(value[key]):
                return str(value[key])
        strings = [v for v in value.values() if isinstance(v, str) and v.strip()]
        if len(strings) == 1:
            return strings[0]
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    if isinstance(value, list):
        return json.dumps(value, ensure_ascii=False)
    raise RowError(f"'{field}' must be text or an object, got {type(value).__name__}")


def host_of(url: str) -> str:
    """``https://www.acme.com/x`` -> ``acme.com``; '' when not an http(s) URL with a host."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return ""
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return ""
    return parts.hostname.lower().removeprefix("www.")


def first_url(texts: Any) -> str:
    """The first http(s) URL in a sequence of texts (or one text), else ''."""
    if isinstance(texts, str):
        texts = (texts,)
    for item in texts or ():
        if isinstance(item, str):
            match = _URL.search(item)
            if match:
                return match.group(0).rstrip(".,;:!?")
    return ""
