"""The one place a peer's row becomes a native case, so every format fills fields alike."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from engine.models import (
    ExpectedAnswer,
    ExpectedClaim,
    ExpectedTool,
    GroundTruthChunk,
    TestCase,
    ToolCall,
)
from engine.testsets.base import Row, RowError, validated
from engine.testsets.values import host_of, is_blank, metadata_value, string_list, text

SHARED_KEYS = frozenset(
    {"domain", "brand_names", "brands", "tags", "ai_provider", "metadata", "claims"}
)
"""Keys every format reads the same way when present (beyond its own fields)."""


def build_case(
    row: Row,
    *,
    case_id: str,
    query: str,
    response: str | None,
    reference: str = "",
    context: tuple[str, ...] | None = None,
    reference_contexts: Iterable[str] = (),
    chunks: Iterable[GroundTruthChunk] = (),
    known: Iterable[str] = (),
    metadata: Mapping[str, Any] | None = None,
    context_ids: tuple[str, ...] | None = None,
    relevant_ids: Iterable[str] = (),
    tools_called: tuple[ToolCall, ...] = (),
    expected_tools: tuple[ExpectedTool, ...] | None = None,
) -> TestCase:
    """A validated ``TestCase``: the given fields, the shared keys, and every other
    non-blank key of the row in ``metadata``. ``context_ids`` name the passages of
    ``context`` in order; ``relevant_ids`` those a perfect retrieval returns."""
    value = row.value
    known_keys = set(known) | SHARED_KEYS | {"id"}
    meta: dict[str, Any] = metadata_value(value.get("metadata")) if "metadata" in value else {}
    meta.update(metadata or {})
    claims = value.get("claims")
    if claims is None and isinstance(meta.get("claims"), list):
        claims = meta.pop("claims")  # exports of formats without a claims field keep them here
    for key, cell in value.items():
        if key not in known_keys and not is_blank(cell):
            meta.setdefault(key, cell)
    ground_truth = tuple(chunks) + tuple(
        GroundTruthChunk(chunk_id=f"ref#{i}", text=passage)
        for i, passage in enumerate(reference_contexts)
        if passage.strip()
    )
    return validated(
        {
            "id": case_id,
            "domain": _domain(text(value.get("domain"), "domain")),
            "query": query,
            "response": response,
            "ai_provider": text(value.get("ai_provider"), "ai_provider"),
            "expected_answer": ExpectedAnswer(text=reference, claims=_claims(claims)),
            "ground_truth": ground_truth,
            "context": context,
            "retrieved_context_ids": context_ids,
            "relevant_context_ids": tuple(relevant_ids),
            "brand_names": string_list(value.get("brand_names", value.get("brands")), "brands"),
            "tags": string_list(value.get("tags"), "tags"),
            "metadata": meta,
            "tools_called": tools_called,
            "expected_tools": expected_tools,
        }
    )


def _domain(value: str) -> str:
    """A domain as given, or the host of a URL given as the domain."""
    return host_of(value) or value.strip()


def _claims(value: Any) -> tuple[ExpectedClaim, ...]:
    """Claims as a list of strings or of ``{id, text, importance}`` objects."""
    from engine.testsets.values import list_value

    items = list_value(value, "claims") or []
    out = []
    for i, item in enumerate(items, start=1):
        if isinstance(item, str) and item.strip():
            out.append(ExpectedClaim(id=f"c{i}", text=item.strip()))
        elif isinstance(item, dict):
            try:
                out.append(ExpectedClaim.model_validate({"id": f"c{i}", **item}))
            except ValueError as exc:
                raise RowError(f"'claims[{i - 1}]' is not a claim ({exc})".splitlines()[0]) from exc
    return tuple(out)


def id_list(value: Any, field: str) -> tuple[str, ...] | None:
    """Passage ids (strings or numbers, in any list encoding); None when absent."""
    from engine.testsets.values import list_value

    items = list_value(value, field)
    if items is None:
        return None
    out = []
    for i, item in enumerate(items):
        if isinstance(item, bool) or not isinstance(item, str | int) or not str(item).strip():
            raise RowError(f"'{field}[{i}]' must be an id (text or a number), got {item!r}")
        out.append(str(item).strip())
    return tuple(out)
