"""A run's cases, responses and scores written in a peer's own format (``evalhouse export``).

Each format is the one its loader reads back (``export -> import`` gives the same cases):

- ``jsonl``: native ``TestCase`` lines, scores under ``metadata.evalhouse``;
- ``csv``: native field columns (lists as JSON) plus one column per score;
- ``ragas``: ``SingleTurnSample`` keys (``user_input``, ``retrieved_contexts``,
  ``reference_contexts``, ``response``, ``reference``) as JSONL, or CSV when the output
  ends in ``.csv``, with ``id``, ``domain`` and the scores as extra columns, as RAGAS's
  own result tables carry metric columns;
- ``deepeval``: a JSON array of test cases (``input``, ``actual_output``,
  ``expected_output``, ``context``, ``retrieval_context``, ``name``) with the domain,
  claims and scores in ``additional_metadata``; CSV when the output ends in ``.csv``, the
  lists joined with ``|`` as DeepEval's ``save_as`` writes them and its loader splits them
  (a passage that holds ``|`` makes its cell a JSON list instead);
- ``promptfoo``: a YAML list of tests (``tests: file://...``): ``vars.question``,
  ``vars.context`` as ONE string (passages joined by a blank line: promptfoo runs a test
  once per element of a list var), ``vars.response``, the reference as a ``factuality``
  assertion, the whole query as the description, and id, domain, the passages, claims,
  ground truth and scores in ``metadata`` (promptfoo has no field for them).

An output file's extension must be one its format is written as (``OUTPUT_SUFFIXES``):
a ``.csv`` never silently receives JSON.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from engine.models import TestCase
from engine.testsets.formats.promptfoo import CONTEXT_JOINER

EXPORT_FORMATS = ("ragas", "deepeval", "promptfoo", "jsonl", "csv")
OUTPUT_SUFFIXES: dict[str, tuple[str, ...]] = {
    "ragas": (".jsonl", ".csv"),
    "deepeval": (".json", ".csv"),
    "promptfoo": (".yaml", ".yml"),
    "jsonl": (".jsonl", ".ndjson"),
    "csv": (".csv",),
    "dpo": (".jsonl",),
}
"""The extensions each export format (``dpo`` included) is written as; an output without
an extension (a pipe, ``/dev/stdout``) takes the format's first."""
SCORE_KEYS = (
    "accuracy", "completeness", "attribution", "coverage_percent", "judge_faithfulness",
    "judge_completeness", "passed", "claim_faithfulness", "rag_correctness",
    "rag_faithfulness", "rag_precision", "rag_recall", "rag_relevance", "rag_overall",
    "overall", "error",
)  # fmt: skip

Item = tuple[TestCase, Mapping[str, Any]]
"""A case (with the run's response) and its scores."""


def export_text(items: Sequence[Item], fmt: str, *, csv_output: bool = False) -> str:
    """The file content of ``items`` in ``fmt`` (one of ``EXPORT_FORMATS``)."""
    if fmt == "jsonl":
        return "".join(json.dumps(_native(c, s), ensure_ascii=False) + "\n" for c, s in items)
    if fmt == "csv":
        return _csv([_csv_row(c, s) for c, s in items])
    if fmt == "ragas":
        rows = [_ragas(c, s) for c, s in items]
        if csv_output:
            return _csv([{k: _cell(v) for k, v in r.items()} for r in rows])
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    if fmt == "deepeval":
        cases = [_deepeval(c, s) for c, s in items]
        if csv_output:
            return _csv([_deepeval_csv_row(case) for case in cases])
        return json.dumps(cases, ensure_ascii=False, indent=2)
    if fmt == "promptfoo":
        import yaml

        tests = [_promptfoo(c, s) for c, s in items]
        return str(yaml.safe_dump(tests, allow_unicode=True, sort_keys=False))
    raise ValueError(f"unknown export format {fmt!r}; one of {', '.join(EXPORT_FORMATS)}")


def _scores(scores: Mapping[str, Any]) -> dict[str, Any]:
    return {k: scores.get(k) for k in SCORE_KEYS}


def _native(case: TestCase, scores: Mapping[str, Any]) -> dict[str, Any]:
    data = case.model_dump(mode="json")
    data["metadata"] = {**case.metadata, "evalhouse": _scores(scores)}
    return data


def _claims(case: TestCase) -> list[dict[str, str]]:
    return [c.model_dump(mode="json") for c in case.expected_answer.claims]


def _cell(value: Any) -> Any:
    """A CSV cell: lists and objects as JSON, None as empty."""
    if value is None:
        return ""
    if isinstance(value, list | tuple | dict):
        return json.dumps(value, ensure_ascii=False)
    return value


def _csv(rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]) if rows else [], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def _csv_row(case: TestCase, scores: Mapping[str, Any]) -> dict[str, Any]:
    row = {
        "id": case.id,
        "domain": case.domain,
        "query": case.query,
        "response": case.response or "",
        "ai_provider": case.ai_provider,
        "reference": case.expected_answer.text,
        "claims": _claims(case),
        "context": list(case.context) if case.context is not None else "",
        "ground_truth": [c.model_dump(mode="json") for c in case.ground_truth],
        "brand_names": list(case.brand_names),
        "tags": list(case.tags),
        "metadata": case.metadata,
        **_scores(scores),
    }
    return {k: _cell(v) if v != [] else "" for k, v in row.items()}


def _ragas(case: TestCase, scores: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": case.id,
        "domain": case.domain,
        "user_input": case.query,
        "retrieved_contexts": list(case.context) if case.context is not None else None,
        "reference_contexts": [c.text for c in case.ground_truth],
        "response": case.response,
        "reference": case.expected_answer.text,
        **_scores(scores),
    }


def _deepeval(case: TestCase, scores: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "name": case.id,
        "input": case.query,
        "actual_output": case.response,
        "expected_output": case.expected_answer.text or None,
        "context": [c.text for c in case.ground_truth] or None,
        "retrieval_context": list(case.context) if case.context is not None else None,
        "additional_metadata": {
            **case.metadata,
            "domain": case.domain,
            "claims": _claims(case),
            "evalhouse": _scores(scores),
        },
    }


def _deepeval_csv_row(case: Mapping[str, Any]) -> dict[str, Any]:
    """A DeepEval test case as a ``save_as`` CSV row: lists joined with ``|``."""
    row = dict(case)
    for key in ("context", "retrieval_context"):
        items = row[key]
        if items is None:
            row[key] = ""
        elif any("|" in item for item in items):
            row[key] = json.dumps(items, ensure_ascii=False)  # "|" would split a passage
        else:
            row[key] = "|".join(items)
    return {k: _cell(v) for k, v in row.items()}


def unsupported_suffix(fmt: str, output: Path) -> str:
    """Why ``output`` cannot hold ``fmt`` ('' when it can): a format is written as one of
    its ``OUTPUT_SUFFIXES``, never as another under a misleading name."""
    suffix = output.suffix.lower()
    allowed = OUTPUT_SUFFIXES.get(fmt, ())
    if not suffix or suffix in allowed:
        return ""
    return (
        f"--output {output}: --format {fmt} is written as {' or '.join(allowed)}, "
        f"not {suffix}; name the file accordingly"
    )


def _promptfoo(case: TestCase, scores: Mapping[str, Any]) -> dict[str, Any]:
    variables: dict[str, Any] = {"question": case.query}
    if case.context is not None:
        variables["context"] = CONTEXT_JOINER.join(case.context)
    if case.response is not None:
        variables["response"] = case.response
    asserts = []
    if case.expected_answer.text:
        asserts.append({"type": "factuality", "value": case.expected_answer.text})
    description = case.metadata.get("description")
    test: dict[str, Any] = {
        "description": description if isinstance(description, str) else case.query,
        "vars": variables,
    }
    if asserts:
        test["assert"] = asserts
    test["metadata"] = {
        **case.metadata,
        "id": case.id,
        "domain": case.domain,
        "claims": _claims(case),
        "ground_truth": [c.model_dump(mode="json") for c in case.ground_truth],
        "evalhouse": _scores(scores),
    }
    if case.context is not None:
        test["metadata"]["passages"] = list(case.context)  # the joined var splits back exactly
    return test


def export_items(
    test_set: str,
    test_set_hash: str,
    config_json: str,
    samples: Sequence[Mapping[str, Any]],
    claims: Mapping[str, Sequence[Mapping[str, Any]]],
    *,
    warn: Callable[[str], None],
    stored_cases: Mapping[str, str] | None = None,
) -> list[Item]:
    """A stored run's cases and scores, ready for ``export_text``: the cases the run kept
    in the warehouse (``stored_cases``, case JSON per sample id); for a run of an earlier
    version, which kept none, the cases of its test set when the file is still there
    unchanged, else cases rebuilt from the stored rows (``samples``: one per sample;
    ``claims``: the expected claims per sample id), which ``warn`` says."""
    from engine.models import ExpectedAnswer, ExpectedClaim, RunConfig
    from engine.testsets import TestSetError, load_test_set

    cases: dict[str, TestCase] = {
        sid: TestCase.model_validate_json(text) for sid, text in (stored_cases or {}).items()
    }
    source = Path(test_set)
    if not cases:
        try:
            config = RunConfig.model_validate_json(config_json)
            loaded = load_test_set(source, column_map=config.column_map)
            if loaded.sha256 == test_set_hash:
                cases = {c.id: c for c in loaded.cases}
        except (TestSetError, ValueError):
            pass
    if not cases:
        warn(
            f"export: test set {source} is gone or changed; references and contexts "
            "are not in the warehouse and are left out"
        )
    items: list[Item] = []
    for row in samples:
        sid = str(row["sample_id"])
        expected = tuple(
            ExpectedClaim(id=c["claim_id"], text=c["claim_text"], importance=c["importance"])
            for c in claims.get(sid, ())
        )
        case = cases.get(sid) or TestCase(
            id=sid,
            domain=row["domain"] or "",
            query=row["query"] or sid,
            ai_provider=row["ai_provider"] or "",
            tags=tuple(row["tags"] or ()),
            expected_answer=ExpectedAnswer(claims=expected),
        )
        # an error row has no response: keep the case's own (None when it had none)
        response = row["response"] or case.response
        items.append((case.model_copy(update={"response": response}), row))
    return items
