"""``ragas``: RAGAS datasets, 0.2+ (``EvaluationDataset`` of ``SingleTurnSample``) and 0.1.

0.2+: ``user_input`` -> query, ``response``, ``retrieved_contexts`` -> context,
``reference`` -> expected answer, ``reference_contexts`` -> ground truth (``ref#i``),
``retrieved_context_ids`` / ``reference_context_ids`` (for RAGAS's id-based context
precision and recall) -> ``retrieved_context_ids`` / ``relevant_context_ids``.
0.1 (a HF ``Dataset``): ``question``, ``answer``, ``contexts`` (or ``context``),
``ground_truth`` (a string) or ``ground_truths`` (a list, joined as the reference; each also
a ground-truth passage), ``reference_contexts`` -> ground truth. Lists may be in any
encoding of ``values.list_value``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.models import TestCase
from engine.testsets.base import Row
from engine.testsets.formats.common import build_case, id_list
from engine.testsets.values import context_items, list_value, optional_text, row_id, text

V02 = (
    "user_input", "response", "retrieved_contexts", "reference", "reference_contexts",
    "retrieved_context_ids", "reference_context_ids",
)  # fmt: skip
V01 = (
    "question", "answer", "contexts", "context", "ground_truth", "ground_truths",
    "reference_contexts",
)  # fmt: skip


class RagasLoader:
    """RAGAS 0.2+ rows (``user_input``)."""

    name = "ragas"
    required: tuple[str, ...] = ("user_input",)

    def detect(self, keys: frozenset[str], first: Mapping[str, Any], container: str) -> bool:
        """Rows with ``user_input``."""
        return "user_input" in keys

    def load(self, row: Row) -> TestCase:
        """One ``SingleTurnSample``."""
        value = row.value
        refs = context_items(value.get("reference_contexts"), "reference_contexts") or ()
        return build_case(
            row,
            case_id=row_id(row),
            query=text(value.get("user_input"), "user_input", required=True),
            response=optional_text(value.get("response"), "response"),
            reference=text(value.get("reference"), "reference"),
            context=context_items(value.get("retrieved_contexts"), "retrieved_contexts"),
            reference_contexts=refs,
            known=V02,
            context_ids=id_list(value.get("retrieved_context_ids"), "retrieved_context_ids"),
            relevant_ids=id_list(value.get("reference_context_ids"), "reference_context_ids") or (),
        )


class Ragas01Loader:
    """RAGAS 0.1 rows (``question`` with ``contexts`` or ``ground_truth(s)``)."""

    name = "ragas01"
    required: tuple[str, ...] = ("question",)

    def detect(self, keys: frozenset[str], first: Mapping[str, Any], container: str) -> bool:
        """``question`` plus a 0.1 list column (a bare question/answer file is ambiguous)."""
        return "question" in keys and bool(
            keys & {"contexts", "ground_truth", "ground_truths", "reference_contexts"}
        )

    def load(self, row: Row) -> TestCase:
        """One row of a RAGAS 0.1 ``Dataset``."""
        value = row.value
        truths = [str(t) for t in list_value(value.get("ground_truths"), "ground_truths") or ()]
        reference = text(value.get("ground_truth"), "ground_truth") or "\n".join(truths)
        # Generated 0.1 test sets name the retrieved passages "context" or "contexts" and
        # the passages the question was written from "reference_contexts".
        contexts = value.get("contexts", value.get("context"))
        refs = context_items(value.get("reference_contexts"), "reference_contexts") or ()
        return build_case(
            row,
            case_id=row_id(row),
            query=text(value.get("question"), "question", required=True),
            response=optional_text(value.get("answer"), "answer"),
            reference=reference,
            context=context_items(contexts, "contexts"),
            reference_contexts=tuple(refs) or (tuple(truths) if len(truths) > 1 else ()),
            known=V01,
        )
