"""``native``: DESIGN.md's format, one ``TestCase`` object per JSONL line (or a JSON array).

Validation is strict (an unknown key is a row error) because the format is ours: a typo
in a field name must not silently drop the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.models import TestCase
from engine.testsets.base import Row, validated


class NativeLoader:
    """Objects with ``id`` and ``query``: the native format."""

    name = "native"
    required: tuple[str, ...] = ("id", "query")

    def detect(self, keys: frozenset[str], first: Mapping[str, Any], container: str) -> bool:
        """JSON rows with ``id`` and ``query`` (a CSV goes to the columns loader)."""
        return container in ("jsonl", "json") and {"id", "query"} <= keys

    def load(self, row: Row) -> TestCase:
        """The row validated as a ``TestCase``."""
        return validated(row.value)
