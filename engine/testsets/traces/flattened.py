"""List attributes flattened with indices (``prefix.0.x``, ``prefix.1.x``), as OpenTelemetry
attributes hold lists of objects (``gen_ai.prompt.0.role``, ``llm.output_messages.0.message.
tool_calls.1.tool_call.id``, ``retrieval.documents.2.document.content``).

Where each key sits in such lists is worked out once per set of keys, not per look: every
span of one exporter spells the same keys, and the readers ask each span for several lists
(the question, the answer, documents, tool calls).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.testsets.base import RowError

MAX_INDEX_DIGITS = 6
"""An indexed attribute's index (``gen_ai.prompt.N``) has at most this many digits: a
million messages in one span is beyond any conversation."""

_LAYOUTS_KEPT = 1024
"""Key sets whose layout is remembered; past it the memo starts again (a file whose every
span has its own keys costs one layout per look, as reading without a memo would)."""


@dataclass(frozen=True)
class Layout:
    """Where the keys of one key set sit in flattened lists."""

    lists: dict[str, tuple[tuple[tuple[str, str], ...], ...]]
    """Prefix -> its items by index, ascending; each item's (rest of the key, key) in key
    order."""
    bad: dict[str, str]
    """Prefix -> its first key whose index is malformed (asking for that list fails)."""

    def items(self, attrs: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
        """The items of ``attrs`` (which has this layout's keys) under ``prefix``, each a
        new dict; ``RowError`` when a key under it has a malformed index."""
        if prefix in self.bad:
            key = self.bad[prefix]
            raise RowError(
                f"attribute {key[:60]!r}: not an index of at most {MAX_INDEX_DIGITS} digits"
            )
        return [{rest: attrs[key] for rest, key in item} for item in self.lists.get(prefix, ())]


_LAYOUTS: dict[tuple[str, ...], Layout] = {}


def layout(attrs: Mapping[str, Any]) -> Layout:
    """The layout of ``attrs``'s keys (remembered by key set)."""
    keys = tuple(attrs)
    found = _LAYOUTS.get(keys)
    if found is None:
        found = _layout(keys)
        if len(_LAYOUTS) >= _LAYOUTS_KEPT:
            _LAYOUTS.clear()
        _LAYOUTS[keys] = found
    return found


def _layout(keys: tuple[str, ...]) -> Layout:
    by_index: dict[str, dict[int, list[tuple[str, str]]]] = {}
    bad: dict[str, str] = {}
    for key in keys:
        if not isinstance(key, str):
            continue
        parts = key.split(".")
        for at in range(1, len(parts)):
            index = parts[at]
            if not index.isdigit():
                continue
            prefix = ".".join(parts[:at])
            # str.isdigit() holds for "²" and other Unicode digits int() refuses, and int()
            # reads a 5,000-digit index only to fail: both are malformed indices.
            if not index.isascii() or len(index) > MAX_INDEX_DIGITS:
                bad.setdefault(prefix, key)
                continue
            rest = ".".join(parts[at + 1 :])
            by_index.setdefault(prefix, {}).setdefault(int(index), []).append((rest, key))
    lists = {
        prefix: tuple(tuple(found[i]) for i in sorted(found)) for prefix, found in by_index.items()
    }
    return Layout(lists, bad)
