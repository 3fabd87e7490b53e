"""Test-set loaders: every supported format becomes a tuple of native ``TestCase``.

One loader per format (``engine/testsets/formats/``), each a ``FormatLoader`` that
detects its rows by their keys and converts one row. Formats (``LoadedTestSet.format``
is ``<format>-<container>``, the container being jsonl, json, csv or yaml):

- ``native``: DESIGN.md's JSONL (or a JSON array), validated strictly.
- ``ragas``: RAGAS 0.2+ ``user_input``/``response``/``retrieved_contexts``/``reference``/
  ``reference_contexts``; ``ragas01``: RAGAS 0.1 ``question``/``answer``/``contexts``/
  ``ground_truth(s)``.
- ``deepeval``: goldens and test cases (``input``, ``actual_output``, ``expected_output``,
  ``context``, ``retrieval_context``); ``harness``: ``input``/``expected_output`` CSV.
- ``promptfoo``: ``promptfooconfig.yaml`` tests (inline, ``file://``), tests CSV with
  ``__expected``.
- ``promptfoo-results``: promptfoo's own result files (``eval -o`` JSON, YAML, JSONL, CSV
  and ``promptfoo export``), one case per (test, prompt, provider) with its recorded output.
- ``langfuse`` / ``phoenix``: dataset item exports (input, expected output, metadata).
- ``answer-synthesis``: ``{queryLogId, question, answer, context}``.
- ``otlp`` / ``langfuse-traces``: exported production traces (OTLP/JSON spans with the
  GenAI or OpenInference conventions, Langfuse traces with observations), one case per
  trace with its recorded answer (``engine.testsets.traces``).
- ``columns``: any file whose columns are native field names, or mapped to them with
  ``--map COLUMN=FIELD``.

Every case has a domain (its own, else the host of a ground-truth/metadata/context URL,
else the file's stem). Bad rows become ``Problem`` (file, line, reason) and are skipped;
``strict=True`` raises ``TestSetError`` instead. File-level problems (empty, not UTF-8,
too big, unknown format, a mapped column that is absent) always raise.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator

from engine.models import CaseRecord, TestCase
from engine.testsets.base import (
    MAX_FILE_BYTES,
    MAX_ROW_BYTES,
    LoadedTestSet,
    Problem,
    TestSetError,
)
from engine.testsets.loader import derive_domain, load_test_set

FORMATS = (
    "native", "ragas", "ragas01", "deepeval", "harness", "promptfoo-results", "promptfoo",
    "langfuse", "phoenix",
    "answer-synthesis", "columns", "otlp", "langfuse-traces",
)  # fmt: skip


_LATER_FIELDS: dict[str, object] = {
    "retrieved_context_ids": None,
    "relevant_context_ids": [],
    "tools_called": [],
    "expected_tools": None,
    "expected_tools_ordered": False,
    "trajectory": [],
}
"""Test-case fields added after the format was first published, with their unset value."""


def case_hash(case: TestCase) -> str:
    """sha256 of the canonical JSON of a case: changes when anything in the case changes."""
    dumped = case.model_dump(mode="json")
    # Fields added to the format later are left out while unset, so a case written before
    # they existed keeps its hash (stored runs compare it).
    for name, default in _LATER_FIELDS.items():
        if dumped.get(name) == default:
            dumped.pop(name, None)
    blob = json.dumps(dumped, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def case_records(run_id: str, cases: Iterable[TestCase]) -> list[CaseRecord]:
    """The ``cases`` lake rows of a run: each case as the run read it."""
    return [
        CaseRecord(
            run_id=run_id,
            sample_id=case.id,
            sample_hash=case_hash(case),
            domain=case.domain,
            query=case.query,
            reference=case.expected_answer.text,
            case_json=json.dumps(case.model_dump(mode="json"), ensure_ascii=False),
        )
        for case in cases
    ]


def iter_formats() -> Iterator[str]:
    """The format names (without the container) ``LoadedTestSet.format`` starts with."""
    return iter(FORMATS)


__all__ = [
    "MAX_FILE_BYTES",
    "MAX_ROW_BYTES",
    "LoadedTestSet",
    "Problem",
    "TestSetError",
    "case_hash",
    "case_records",
    "derive_domain",
    "iter_formats",
    "load_test_set",
]
