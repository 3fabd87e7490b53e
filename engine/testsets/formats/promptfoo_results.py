"""``promptfoo-results``: what ``promptfoo eval -o FILE`` and ``promptfoo export`` write.

A promptfoo result file is a test set whose answers are already recorded: one case per
(test, prompt, provider), its response the output promptfoo recorded. Three shapes, told
apart by their keys, never by a file name:

- ``EvaluateResult`` objects (``testCase``, ``vars``, ``prompt``, ``provider``,
  ``response.output``, ``success``, ``score``, ``gradingResult``): one per line of
  ``-o out.jsonl``, and under ``results.results`` of ``-o out.json``/``out.yaml`` and of
  ``promptfoo export`` (the same ``OutputFile``, with ``evalId`` and ``config``);
- the result table of ``-o out.csv``: an optional ``Description``, one column per var,
  then per prompt a ``[provider] label`` column followed by ``Status``, ``Score``,
  ``Named Scores``, ``Grader Reason`` and ``Comment`` (repeated names, one group per
  prompt); older releases wrote one column per prompt whose cells start ``[PASS]`` /
  ``[FAIL]`` / ``[ERROR]``.

The query is the test's question-like var (``question``, ``query``...), else its only var,
else the prompt as promptfoo rendered and sent it (the last user message of a chat prompt),
else the var whose name says "question" best. The reference, context and assertions are
read as for a promptfoo test (``formats/promptfoo.py``); without a reference assertion an
expected-like var (``expected``, ``expected_answer``, ``ideal``...) is the reference. The
provider is ``ai_provider``; provider, prompt, pass/fail, score and the grader's reason are
kept in ``metadata.promptfoo``. A result promptfoo recorded as an error, without output,
is a skipped row naming its line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from engine.models import TestCase
from engine.testsets.base import Row, RowError
from engine.testsets.formats.promptfoo import (
    CONTEXT_VARS,
    QUERY_VARS,
    RESPONSE_VARS,
    SHARED_VARS,
    PromptfooLoader,
)
from engine.testsets.inference import best_named
from engine.testsets.values import answer_text, is_blank, prompt_text

RESULT_KEYS = frozenset({"testCase", "response", "promptIdx", "testIdx", "gradingResult"})
"""Keys only an ``EvaluateResult`` has; two of them mark a row as one."""

TABLE_GROUP = ("status", "score", "named scores", "grader reason", "comment")
"""The columns promptfoo's CSV writes after each ``[provider] label`` output column."""

_STATUS = re.compile(r"^\[(PASS|FAIL|ERROR)\]\s*(\([^)\n]*\))?\s*", re.DOTALL)
_LABELLED = re.compile(r"^\[([^\]]+)\]\s*(.*)$", re.DOTALL)


def nested_results(document: Any) -> list[Any] | None:
    """The ``EvaluateResult`` list of an ``OutputFile`` (``results.results``), else None."""
    if not isinstance(document, dict):
        return None
    results = document.get("results")
    inner = results.get("results") if isinstance(results, dict) else None
    return inner if isinstance(inner, list) else None


def is_result_table(header: Sequence[str]) -> bool:
    """Whether a CSV header is promptfoo's result table (an output column followed by
    its status group, or a ``[provider] label`` column of an older release)."""
    lowered = [h.strip().lower() for h in header]
    for i in range(len(lowered) - 1):
        if lowered[i + 1 : i + 1 + len(TABLE_GROUP)] == list(TABLE_GROUP):
            return True
    return any(_is_output_header(h) for h in header)


def _is_output_header(name: str) -> bool:
    """``[provider] label``, or the JSON prompt object very old releases wrote."""
    name = name.strip()
    if name.startswith("{"):
        return '"raw"' in name or '"provider"' in name
    return bool(_LABELLED.match(name)) and name.lower() not in TABLE_GROUP


def table_results(header: Sequence[str], record: Sequence[str]) -> list[dict[str, Any]]:
    """One CSV record of the result table as ``EvaluateResult``-like objects, one per
    output column (the shape the loader reads, whatever file it came from)."""
    lowered = [h.strip().lower() for h in header]
    outputs: list[int] = []
    for i, name in enumerate(header):
        grouped = lowered[i + 1 : i + 1 + len(TABLE_GROUP)] == list(TABLE_GROUP)
        if grouped or _is_output_header(name):
            outputs.append(i)
    first = outputs[0] if outputs else len(header)
    variables: dict[str, Any] = {}
    description = ""
    for i in range(first):
        if lowered[i] == "description" and i == 0:
            description = record[i]
        else:
            variables[header[i].strip()] = record[i]
    out = []
    for prompt_idx, i in enumerate(outputs):
        provider, label = _provider_label(header[i].strip())
        cell = record[i]
        grouped = lowered[i + 1 : i + 2] == ["status"]
        group = record[i + 1 : i + 1 + len(TABLE_GROUP)] if grouped else []
        if group:
            status, output = group[0].strip().upper(), cell
            score = _number(group[1]) if len(group) > 1 else None
            reason = group[3] if len(group) > 3 else ""
        else:
            status, output, score, reason = _status_cell(cell)
        result: dict[str, Any] = {
            "testIdx": None,
            "promptIdx": prompt_idx,
            "testCase": {"vars": variables, "description": description},
            "vars": variables,
            "provider": {"id": provider, "label": ""},
            "prompt": {"label": label, "raw": ""},
            "response": {} if status == "ERROR" else {"output": output},
            "success": status == "PASS",
            "score": score,
            "gradingResult": {"reason": reason} if reason else None,
            "error": output if status == "ERROR" else None,
        }
        out.append(result)
    return out


def _provider_label(header: str) -> tuple[str, str]:
    """``[openai:gpt-4o-mini] my prompt`` -> provider and label; a JSON prompt header
    (very old releases) gives its ``provider`` and ``label``/``raw``."""
    if header.startswith("{"):
        try:
            prompt = json.loads(header)
        except json.JSONDecodeError:
            prompt = None
        if isinstance(prompt, dict):
            return str(prompt.get("provider") or ""), str(
                prompt.get("label") or prompt.get("raw") or ""
            )
    match = _LABELLED.match(header)
    return (match.group(1), match.group(2)) if match else ("", header)


def _status_cell(cell: str) -> tuple[str, str, float | None, str]:
    """A ``[PASS] (1.00)\n\noutput\n\nPass Reason: ...`` cell of an older release as
    status, output, score and reason; a failure written as ``[FAIL] reason\n---\noutput``
    keeps the part after ``---``."""
    match = _STATUS.match(cell)
    if not match:
        return "", cell, None, ""
    score = _number(match.group(2).strip("()").split(",")[0]) if match.group(2) else None
    rest = cell[match.end() :]
    if "\n---\n" in rest:
        rest = rest.split("\n---\n", 1)[1]
    reason = ""
    found = re.search(r"\n\n(?:Pass|Fail) Reason: (.*)\Z", rest, flags=re.DOTALL)
    if found:
        reason, rest = found.group(1).strip(), rest[: found.start()]
    return match.group(1), rest.strip(), score, reason


def _number(cell: str) -> float | None:
    """A score cell as a number; None when blank or not a number."""
    try:
        return float(cell)
    except ValueError:
        return None


class PromptfooResultsLoader:
    """``EvaluateResult`` rows (promptfoo's JSON, YAML, JSONL and CSV result files)."""

    name = "promptfoo-results"
    required: tuple[str, ...] = ()

    def detect(self, keys: frozenset[str], first: Mapping[str, Any], container: str) -> bool:
        """Two keys only an ``EvaluateResult`` has (``testCase`` and ``response``, say)."""
        return len(keys & RESULT_KEYS) >= 2

    def load(self, row: Row) -> TestCase:
        """One (test, prompt, provider) result as a case with its recorded response."""
        result = row.value
        output = _output(result)
        if output is None:
            error = str(result.get("error") or "no output recorded")
            raise RowError(f"promptfoo recorded no output ({_first_line(error)}); row skipped")
        test = dict(result.get("testCase") or {})
        variables = {**(test.get("vars") or {}), **(result.get("vars") or {})}
        test["vars"] = variables
        rendered = _rendered_prompt(result.get("prompt"))
        base = PromptfooLoader((rendered,) if rendered and not _has_query_var(variables) else ())
        test_idx = result.get("testIdx")
        index = test_idx + 1 if isinstance(test_idx, int) else row.index
        case = base.load(Row(row.line, row.size, test, index, "json", row.source))
        provider = _provider(result.get("provider"))
        prompt_idx = result.get("promptIdx")
        update: dict[str, Any] = {
            "id": f"{case.id}-p{prompt_idx}" if isinstance(prompt_idx, int) else case.id,
            "response": output,
            "metadata": {**case.metadata, "promptfoo": _kept(result, provider)},
        }
        if provider and not case.ai_provider:
            update["ai_provider"] = provider
        if not case.expected_answer.text.strip():
            key = best_named(variables, "reference")
            if (
                key
                and isinstance(variables[key], str | int | float)
                and not is_blank(variables[key])
            ):
                expected = case.expected_answer.model_copy(update={"text": str(variables[key])})
                update["expected_answer"] = expected
        return case.model_copy(update=update)


def _has_query_var(variables: Mapping[str, Any]) -> bool:
    """Whether a var names the question (then it, not the whole rendered prompt, is the
    query: the prompt's instructions are not what the user asked)."""
    skip = {*CONTEXT_VARS, *RESPONSE_VARS, *SHARED_VARS}
    strings = [
        k for k, v in variables.items() if isinstance(v, str) and v.strip() and k not in skip
    ]
    return any(k in QUERY_VARS for k in strings) or len(strings) == 1


def _output(result: Mapping[str, Any]) -> str | None:
    """The recorded output as text (objects as JSON); None when there is none."""
    response = result.get("response")
    value = response.get("output") if isinstance(response, dict) else None
    if is_blank(value):
        return None
    return value if isinstance(value, str) else answer_text(value, "response.output")


def _rendered_prompt(prompt: Any) -> str:
    """The prompt as promptfoo sent it: its ``raw`` text, or a chat prompt's last user
    message (``raw`` holds the messages as JSON text)."""
    raw = prompt.get("raw") if isinstance(prompt, dict) else prompt
    if not isinstance(raw, str) or not raw.strip():
        return ""
    if raw.lstrip().startswith("["):
        try:
            return prompt_text(json.loads(raw), "prompt")
        except (ValueError, RowError):
            return raw
    return raw


def _provider(value: Any) -> str:
    """A provider given as ``{id, label}`` or as its id."""
    if isinstance(value, dict):
        return str(value.get("label") or value.get("id") or "")
    return str(value or "")


def _kept(result: Mapping[str, Any], provider: str) -> dict[str, Any]:
    """What promptfoo decided about this output, kept beside the case."""
    grading = result.get("gradingResult")
    prompt = result.get("prompt")
    raw_provider = result.get("provider")
    kept = {
        "provider": provider,
        "provider_id": raw_provider.get("id") if isinstance(raw_provider, dict) else None,
        "prompt_label": prompt.get("label") if isinstance(prompt, dict) else None,
        "prompt_idx": result.get("promptIdx"),
        "test_idx": result.get("testIdx"),
        "success": result.get("success"),
        "score": result.get("score"),
        "reason": grading.get("reason") if isinstance(grading, dict) else None,
        "latency_ms": result.get("latencyMs"),
        "cost": result.get("cost"),
    }
    return {k: v for k, v in kept.items() if not is_blank(v)}


def _first_line(message: str) -> str:
    line = message.strip().splitlines()[0] if message.strip() else "no output"
    return line[:200]
