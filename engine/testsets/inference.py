"""Which column holds what, read from the names people give columns.

Real files name their columns freely: ``question``, ``customer_message``, ``expected_answer``,
``retrieved_contexts``, ``gold``. When no format's own layout matches, each native field
gets the column whose name means it best: an exact synonym scores highest, a name that
contains a synonym's words less, and a column is given to one field only. A file with one
query-like column runs; ``inspect`` prints the mapping chosen and the runner-up for each
field, and ``--map`` overrides it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

# fmt: off
SYNONYMS: dict[str, tuple[str, ...]] = {
    "query": (
        "query", "question", "question_text", "query_text", "user_input", "user_query",
        "user_question", "user_message", "customer_message", "input", "input_text", "prompt",
        "message", "instruction", "request", "ask", "utterance", "user", "body", "text",
    ),
    "response": (
        "response", "answer", "output", "actual_output", "reply", "completion", "generation",
        "generated_answer", "model_answer", "model_output", "prediction", "predicted_answer",
        "llm_answer", "bot_response", "assistant", "result",
    ),
    "reference": (
        "reference", "expected_answer", "expected_output", "ground_truth_answer", "gold",
        "gold_answer", "target", "label", "ideal", "ideal_answer", "correct_answer",
        "reference_answer", "expected", "answer_gold", "ground_truth", "ground_truths",
        "expected_response", "solution",
    ),
    "context": (
        "context", "contexts", "retrieved_contexts", "retrieval_context", "retrieved_context",
        "documents", "docs", "passages", "chunks", "sources", "source", "evidence",
        "knowledge", "retrieved_documents", "search_results",
    ),
    "reference_contexts": (
        "reference_contexts", "reference_context", "gold_contexts", "gold_passages",
        "relevant_contexts", "relevant_passages", "supporting_facts",
    ),
    "id": ("id", "case_id", "test_id", "question_id", "qid", "uuid", "example_id", "item_id"),
    "domain": ("domain", "category", "topic", "site", "website"),
    "tags": ("tags", "labels", "keywords"),
}
# fmt: on
"""Field -> column names that mean it, best first (names compared after normalising)."""

PRIORITY = ("query", "response", "reference", "context", "reference_contexts", "id", "domain")
"""Fields are given columns in this order, so the query gets first pick."""

_SPLIT = re.compile(r"[^a-z0-9]+")
EXACT = 1.0
CONTAINS = 0.6
"""Score of a column whose words include all of a synonym's words (``user_question_text``)."""


def normalised(name: str) -> str:
    """``Question Text`` and ``question-text`` as ``question_text``."""
    return "_".join(w for w in _SPLIT.split(name.lower()) if w)


def score(column: str, field: str) -> float:
    """How well ``column``'s name says ``field`` (0 when it does not): exact synonyms by
    rank, then names that contain a synonym's words."""
    name = normalised(column)
    words = set(name.split("_"))
    best = 0.0
    for rank, synonym in enumerate(SYNONYMS[field]):
        if name == synonym:
            return EXACT - rank * 0.01
        if set(synonym.split("_")) <= words and len(synonym) > 3:
            best = max(best, CONTAINS - rank * 0.005)
    return best


@dataclass(frozen=True)
class Inference:
    """The mapping chosen (column -> field) and, per field, the next best column."""

    mapping: dict[str, str]
    runner_up: dict[str, str]

    def describe(self) -> str:
        """``question -> query (runner-up: prompt), ...`` for ``inspect``."""
        parts = []
        for column, field in self.mapping.items():
            other = self.runner_up.get(field)
            parts.append(f"{column} -> {field}" + (f" (runner-up: {other})" if other else ""))
        return ", ".join(parts) or "none"


def infer_mapping(columns: Iterable[str], native: Iterable[str] = ()) -> Inference:
    """Columns for the native fields by name. Columns already named after a ``native``
    field keep their meaning, and the fields they fill get no other column. Pairs are
    taken best score first (an exact synonym beats a name that merely contains a word:
    ``expected_answer`` is the reference, not the response), earlier fields of
    ``PRIORITY`` winning ties."""
    keep = {normalised(n) for n in native} | set(SYNONYMS)
    available = [c for c in columns if c and normalised(c) not in keep]
    present = {normalised(c) for c in columns}
    filled = {f for f in SYNONYMS if f in present}
    if present & {"expected_answer", "reference", "expected_output"}:
        filled.add("reference")
    pairs = sorted(
        (
            (score(c, field), -PRIORITY.index(field), c, field)
            for field in PRIORITY
            if field not in filled
            for c in available
        ),
        reverse=True,
    )
    mapping: dict[str, str] = {}
    runner_up: dict[str, str] = {}
    for value, _, column, field in pairs:
        if value < CONTAINS - 0.1:
            break
        if field in mapping.values():
            if column not in mapping:
                runner_up.setdefault(field, column)
            continue
        if column in mapping:
            continue
        mapping[column] = field
    return Inference(mapping, runner_up)


def best_named(names: Iterable[str], field: str) -> str | None:
    """The name among ``names`` that best says ``field`` (None when none does)."""
    ranked = sorted(((score(n, field), n) for n in names), key=lambda pair: -pair[0])
    return ranked[0][1] if ranked and ranked[0][0] > 0 else None


def query_like(names: Iterable[str]) -> str | None:
    """The name among ``names`` that best says "the question" (None when none does)."""
    return best_named(names, "query")
