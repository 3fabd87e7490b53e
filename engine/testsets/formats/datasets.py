"""``langfuse`` and ``phoenix``: dataset items exported from the two tracing tools.

Langfuse ``DatasetItem``: ``id``, ``status``, ``input`` and ``expectedOutput`` (any JSON),
``metadata``, ``sourceTraceId``, ``datasetName``... Phoenix ``Example``: ``id``,
``input``, ``output`` (the reference) and ``metadata`` objects. The question is the input
text, or its question-like key, or its last user message (``values.prompt_text``); the
expected answer is the output text or its answer-like key; ``context``/``contexts`` keys
of the input are the retrieved context (objects that all name an ``id``/``url`` keep those
ids for the retrieval metrics). Archived Langfuse items are skipped, as Langfuse
experiments skip them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.models import TestCase
from engine.scoring.retrieval import passage_id
from engine.testsets.base import Row, RowError
from engine.testsets.formats.common import build_case
from engine.testsets.values import answer_text, context_items, metadata_value, prompt_text, row_id

LANGFUSE_KEYS = frozenset({"expectedOutput", "datasetId", "datasetName", "sourceTraceId"})
_CONTEXT_KEYS = ("context", "contexts", "retrieved_contexts", "documents")


def _context(value: Any) -> tuple[tuple[str, ...] | None, tuple[str, ...] | None]:
    """The retrieved passages of an input, and their ids when every passage is an object
    naming one (a retriever's documents: ``{"id": ..., "content": ...}``)."""
    if not isinstance(value, dict):
        return None, None
    key = next((k for k in _CONTEXT_KEYS if k in value), None)
    if key is None:
        return None, None
    passages = context_items(value[key], f"input.{key}")
    raw = value[key] if isinstance(value[key], list) else []
    ids = [passage_id(item) for item in raw]
    named = tuple(i for i in ids if i is not None)
    return passages, named if passages and len(named) == len(passages) == len(raw) else None


def _item(row: Row, output_key: str, known: set[str]) -> TestCase:
    value = row.value
    raw_input = value.get("input")
    meta = metadata_value(value.get("metadata"))
    flat: dict[str, Any] = {k: meta[k] for k in ("domain", "brand_names", "tags") if k in meta}
    rest = {k: v for k, v in meta.items() if k not in flat}
    shared = Row(row.line, row.size, {"id": value.get("id"), **flat}, row.index, row.container)
    context, context_ids = _context(raw_input)
    return build_case(
        shared,
        case_id=row_id(shared),
        query=prompt_text(raw_input, "input"),
        response=None,
        reference=answer_text(value.get(output_key), output_key),
        context=context,
        context_ids=context_ids,
        metadata={**rest, **{k: v for k, v in value.items() if k not in known and v}},
    )


class LangfuseLoader:
    """Langfuse dataset items (``expectedOutput``, ``datasetName``...)."""

    name = "langfuse"
    required: tuple[str, ...] = ("input",)

    def detect(self, keys: frozenset[str], first: Mapping[str, Any], container: str) -> bool:
        """``input`` and a key only Langfuse writes."""
        return "input" in keys and bool(keys & LANGFUSE_KEYS)

    def load(self, row: Row) -> TestCase:
        """One dataset item."""
        if str(row.value.get("status", "")).upper() == "ARCHIVED":
            raise RowError("archived dataset item; row skipped")
        known = {"id", "input", "expectedOutput", "metadata", "status", "createdAt", "updatedAt"}
        return _item(row, "expectedOutput", known)


class PhoenixLoader:
    """Phoenix dataset examples (``input``/``output`` objects)."""

    name = "phoenix"
    required: tuple[str, ...] = ("input",)

    def detect(self, keys: frozenset[str], first: Mapping[str, Any], container: str) -> bool:
        """An object ``input`` with ``output`` or ``metadata``."""
        return isinstance(first.get("input"), dict) and bool(keys & {"output", "metadata"})

    def load(self, row: Row) -> TestCase:
        """One example."""
        return _item(row, "output", {"id", "input", "output", "metadata", "updated_at"})
