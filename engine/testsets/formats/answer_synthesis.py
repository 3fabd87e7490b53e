"""``answer-synthesis``: the answer-synthesis evaluation's JSON (answer-synthesis-evaluation.md).

An array, or ``{"testCases": [...]}``, of ``{queryLogId, question, answer, context}``.
Context items may be strings or objects (``AggregatedCourseSkills`` with matched learning
outcomes); an object with a passage key becomes that passage, any other object
``key: value`` lines. The spec judges the answer against this context ("use ONLY the
provided context"), so the context is also the case's ground truth (``ctx#i``): without
it every row had nothing to compare with and ended as an error row.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.models import GroundTruthChunk, TestCase
from engine.testsets.base import Row, validated
from engine.testsets.values import context_items, optional_text, text


class AnswerSynthesisLoader:
    """``queryLogId``/``question`` objects in JSON."""

    name = "answer-synthesis"
    required: tuple[str, ...] = ("question",)

    def detect(self, keys: frozenset[str], first: Mapping[str, Any], container: str) -> bool:
        """``queryLogId``, or ``question`` in a JSON file (not a RAGAS 0.1 row)."""
        return "queryLogId" in keys or (container in ("json", "jsonl") and "question" in keys)

    def load(self, row: Row) -> TestCase:
        """One answer-synthesis case."""
        value = row.value
        known = {"queryLogId", "question", "answer", "context", "id", "domain"}
        case_id = text(value.get("queryLogId", value.get("id")), "queryLogId", required=True)
        context = context_items(value.get("context"), "context")
        return validated(
            {
                "id": case_id,
                "domain": text(value.get("domain"), "domain").strip(),
                "query": text(value.get("question"), "question", required=True),
                "response": optional_text(value.get("answer"), "answer")
                if "answer" in value
                else None,
                "context": context,
                "ground_truth": tuple(
                    GroundTruthChunk(chunk_id=f"ctx#{i}", text=passage)
                    for i, passage in enumerate(context or ())
                    if passage.strip()
                ),
                "metadata": {k: v for k, v in value.items() if k not in known},
            }
        )
