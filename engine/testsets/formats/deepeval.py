"""``deepeval`` goldens and test cases, and the eval harness's ``harness`` CSV/JSONL.

DeepEval (``Golden``/``LLMTestCase``, ``EvaluationDataset.save_as``): ``input`` -> query,
``actual_output`` -> response, ``expected_output`` -> expected answer, ``context`` (the
ideal passages) -> ground truth (``ref#i``), ``retrieval_context`` -> context,
``additional_metadata`` -> metadata, ``tools_called`` / ``expected_tools`` (DeepEval
``ToolCall`` objects, ``engine.testsets.formats.tool_calls``) -> the same fields.
``save_as`` joins context lists with ``|`` in CSV and JSONL (its JSON keeps lists), so a
CSV/JSONL cell without a JSON/repr list is split there (``values.joined_items``). A
retrieved passage ``save_as`` wrote from a ``RetrievedContextData``
(``deepeval_source=S,deepeval_context=TEXT``) is its text, and when every passage names
its source the sources are the passage ids. camelCase keys of
Confident AI exports (``actualOutput``, ``expectedOutput``, ``retrievalContext``) are read
too.

Harness (``input``, ``expected_output``, optional ``context`` as a JSON array or one
passage, ``metadata`` as a JSON object, ``output``/``response``, ``id``): the context is
the retrieved context; other columns go to metadata.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from engine.models import TestCase
from engine.testsets.base import Row
from engine.testsets.formats.common import build_case
from engine.testsets.formats.tool_calls import expected_tools, tool_calls
from engine.testsets.values import (
    context_items,
    metadata_value,
    optional_text,
    row_id,
    text,
)

DEEPEVAL_ONLY = frozenset(
    {
        "actual_output",
        "retrieval_context",
        "source_file",
        "additional_metadata",
        "tools_called",
        "expected_tools",
        "actualOutput",
        "expectedOutput",
        "retrievalContext",
        "additionalMetadata",
        "toolsCalled",
        "expectedTools",
    }
)


_READ = DEEPEVAL_ONLY - {"source_file"}
"""DeepEval keys that become case fields; the rest stay in metadata."""


_SOURCED = re.compile(r"^deepeval_source=(?P<source>.*?),deepeval_context=(?P<context>.*)$", re.S)
"""The marker ``save_as`` writes for a ``RetrievedContextData`` (DeepEval 4.3 does), as
DeepEval's own loader reads it back (here across newlines too)."""


def _first(value: Mapping[str, Any], *keys: str) -> Any:
    return next((value[k] for k in keys if value.get(k) is not None), None)


def _retrieved(
    passages: tuple[str, ...] | None,
) -> tuple[tuple[str, ...] | None, tuple[str, ...] | None]:
    """Retrieved passages without their source markers, and the sources as passage ids
    when every passage has one."""
    if not passages:
        return passages, None
    matches = [_SOURCED.match(p) for p in passages]
    texts = tuple(m.group("context") if m else p for m, p in zip(matches, passages, strict=True))
    sources = tuple(m.group("source").strip() for m in matches if m and m.group("source").strip())
    return texts, sources if len(sources) == len(passages) else None


class DeepEvalLoader:
    """DeepEval goldens and test cases (``input`` with a DeepEval-only key)."""

    name = "deepeval"
    required: tuple[str, ...] = ("input",)

    def detect(self, keys: frozenset[str], first: Mapping[str, Any], container: str) -> bool:
        """``input`` (text) and one key only DeepEval writes."""
        return "input" in keys and bool(keys & DEEPEVAL_ONLY)

    def load(self, row: Row) -> TestCase:
        """One golden or test case."""
        value = row.value
        # DeepEval's own writers join a list with "|" in CSV and in JSONL (``save_as``), and
        # its loader splits a text on it; a JSON list stays a list, and a JSON array file
        # (``save_as`` json) holds lists only.
        split = "|" if row.container in ("csv", "jsonl") else None
        ideal = context_items(value.get("context"), "context", delimiter=split) or ()
        retrieved_raw = _first(value, "retrieval_context", "retrievalContext")
        retrieved, retrieved_ids = _retrieved(
            context_items(retrieved_raw, "retrieval_context", delimiter=split)
        )
        meta = metadata_value(
            _first(value, "additional_metadata", "additionalMetadata"), "additional_metadata"
        )
        return build_case(
            row,
            case_id=row_id(row, "id", "name"),
            query=text(value.get("input"), "input", required=True),
            response=optional_text(_first(value, "actual_output", "actualOutput"), "actual_output"),
            reference=text(_first(value, "expected_output", "expectedOutput"), "expected_output"),
            context=retrieved,
            context_ids=retrieved_ids,
            reference_contexts=ideal,
            known={"input", "context", "expected_output", "name", *_READ},
            metadata=meta,
            tools_called=tool_calls(_first(value, "tools_called", "toolsCalled"), "tools_called"),
            expected_tools=expected_tools(
                _first(value, "expected_tools", "expectedTools"), "expected_tools"
            ),
        )


class HarnessLoader:
    """The eval harness: ``input`` and ``expected_output``."""

    name = "harness"
    required: tuple[str, ...] = ("input", "expected_output")

    def detect(self, keys: frozenset[str], first: Mapping[str, Any], container: str) -> bool:
        """``input`` as text (an object input is a Langfuse/Phoenix item)."""
        return "input" in keys and not isinstance(first.get("input"), dict | list)

    def load(self, row: Row) -> TestCase:
        """One harness row."""
        value = row.value
        return build_case(
            row,
            case_id=row_id(row),
            query=text(value.get("input"), "input", required=True),
            response=optional_text(_first(value, "output", "response"), "output"),
            reference=text(value.get("expected_output"), "expected_output"),
            context=context_items(value.get("context"), "context"),
            known={"input", "expected_output", "context", "output", "response"},
        )
