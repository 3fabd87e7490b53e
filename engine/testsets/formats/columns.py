"""``columns``: any table whose columns are named (or mapped with ``--map``) after native
fields: ``query`` (required), ``id``, ``response``, ``reference``/``expected_answer``,
``context``, ``ground_truth``/``reference_contexts``, ``domain``, ``brand_names``,
``tags``, ``ai_provider``, ``claims``, ``metadata``. Lists may use any encoding of
``values.list_value``; other columns go to metadata.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.models import GroundTruthChunk, TestCase
from engine.testsets.base import Row, RowError
from engine.testsets.formats.common import build_case
from engine.testsets.values import (
    answer_text,
    context_items,
    list_value,
    optional_text,
    row_id,
    text,
)

FIELDS = (
    "id", "query", "response", "reference", "expected_answer", "context", "ground_truth",
    "reference_contexts", "domain", "brand_names", "tags", "ai_provider", "claims", "metadata",
)  # fmt: skip
"""Names a ``--map COLUMN=FIELD`` may target."""


class ColumnsLoader:
    """Rows with a ``query`` key that are not strict native JSON."""

    name = "columns"
    required: tuple[str, ...] = ("query",)

    def detect(self, keys: frozenset[str], first: Mapping[str, Any], container: str) -> bool:
        """A ``query`` key."""
        return "query" in keys

    def load(self, row: Row) -> TestCase:
        """One row of native-named columns."""
        value = row.value
        reference = value.get("reference", value.get("expected_answer"))
        truth = list_value(
            value.get("ground_truth", value.get("reference_contexts")), "ground_truth"
        )
        try:
            chunks = [GroundTruthChunk.model_validate(t) for t in truth or () if _is_chunk(t)]
        except ValueError as exc:
            raise RowError(f"'ground_truth' has a bad chunk ({exc})".splitlines()[0]) from exc
        passages = [t for t in truth or () if not _is_chunk(t)]
        return build_case(
            row,
            case_id=row_id(row),
            query=text(value.get("query"), "query", required=True),
            response=optional_text(value.get("response"), "response"),
            reference=answer_text(reference, "reference"),
            context=context_items(value.get("context"), "context"),
            reference_contexts=context_items(passages, "ground_truth") or (),
            chunks=chunks,
            known=FIELDS,
        )


def _is_chunk(item: Any) -> bool:
    """A native ground-truth object (``chunk_id`` and ``text``), as ``export --format csv``
    writes it."""
    return isinstance(item, dict) and {"chunk_id", "text"} <= set(item)
