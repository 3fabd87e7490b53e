"""``promptfoo``: test cases of a ``promptfooconfig.yaml`` (inline or ``file://``), a
tests CSV (var columns, ``__expected``, ``__description``, ``__metadata:KEY``), and a
JSON/YAML list of test objects.

A test ``{description, vars, assert, metadata}`` becomes: query = the var named
question/query/input/prompt/user_input/text, else the only var, else the first prompt of
the config with ``{{var}}`` filled in; context = var context/contexts/retrieved_context;
expected answer = the value of the first ``factuality``, ``similar`` or ``equals``
assertion; ``contains``/``icontains`` values go to ``metadata.contains`` (not claims:
the analyzer matches claims by meaning, and a literal such as ``$49`` scored "missing" in
a response that contained it); an ``llm-rubric`` value goes to ``metadata.rubric``.
promptfoo generates responses at eval time, so a test
has no response (a var named response/output/answer is read as one): run with a target.
``__expected`` cells use promptfoo's ``type: value`` syntax; a bare value means equals.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engine.models import GroundTruthChunk, TestCase
from engine.testsets.base import Row, RowError
from engine.testsets.formats.common import _claims, build_case
from engine.testsets.inference import query_like
from engine.testsets.values import context_items, is_blank, list_value, optional_text, text

QUERY_VARS = ("question", "query", "input", "prompt", "user_input", "text")
CONTEXT_VARS = ("context", "contexts", "retrieved_context", "retrieval_context")
RESPONSE_VARS = ("response", "output", "answer")
SHARED_VARS = ("domain", "brand_names", "tags", "id")
CONTEXT_JOINER = "\n\n"
"""Between the passages of a context written as one string (evalhouse's promptfoo export:
promptfoo runs a test once per element of a list var, so a context must be one text)."""
REFERENCE_TYPES = ("factuality", "similar", "equals", "model-graded-factuality")
CLAIM_TYPES = ("contains", "icontains")
_ASSERT_PREFIX = re.compile(r"^\s*(not-)?([a-z][a-z0-9-]*)\s*:\s?(.*)$", re.DOTALL)
_KNOWN_TYPES = frozenset(
    {*REFERENCE_TYPES, *CLAIM_TYPES, "llm-rubric", "grade", "regex", "javascript", "python",
     "contains-any", "contains-all", "starts-with", "is-json", "model-graded-closedqa",
     "answer-relevance", "context-faithfulness", "context-recall", "levenshtein", "rouge-n",
     "bleu", "icontains-any", "icontains-all", "cost", "latency"}
)  # fmt: skip


def parse_expected(cell: str) -> dict[str, Any]:
    """An ``__expected`` cell as an assertion: ``similar: X`` -> {type: similar, value: X}."""
    match = _ASSERT_PREFIX.match(cell)
    if match and match.group(2) in _KNOWN_TYPES:
        kind = ("not-" if match.group(1) else "") + match.group(2)
        return {"type": "llm-rubric" if kind == "grade" else kind, "value": match.group(3)}
    return {"type": "equals", "value": cell}


class PromptfooLoader:
    """promptfoo test objects (``vars``) and tests CSVs (``__expected``...)."""

    name = "promptfoo"
    required: tuple[str, ...] = ()

    def __init__(self, prompts: tuple[str, ...] = ()) -> None:
        self.prompts = prompts
        """Inline prompt templates of the config, for a query spread over several vars."""

    def detect(self, keys: frozenset[str], first: Mapping[str, Any], container: str) -> bool:
        """A ``vars`` object, or a CSV with a promptfoo ``__`` column."""
        if container == "csv":
            return any(k.startswith(("__expected", "__description", "__metadata")) for k in keys)
        return "vars" in keys or "assert" in keys or container == "yaml"

    def load(self, row: Row) -> TestCase:
        """One promptfoo test."""
        test = _csv_test(row.value) if row.container == "csv" else row.value
        variables = test.get("vars") or {}
        if not isinstance(variables, dict):
            raise RowError(f"'vars' must be a mapping, got {type(variables).__name__}")
        asserts = test.get("assert") or []
        if not isinstance(asserts, list):
            raise RowError(f"'assert' must be a list, got {type(asserts).__name__}")
        reference, contains, rubric = _expectations(asserts)
        metadata = dict(test.get("metadata") or {})
        if rubric:
            metadata["rubric"] = rubric
        if contains:
            metadata["contains"] = list(contains)
        if not is_blank(test.get("description")):
            metadata["description"] = test["description"]
        used = {k for k in (*QUERY_VARS, *CONTEXT_VARS, *RESPONSE_VARS) if k in variables}
        query_key, query = self._query(variables)
        extra_vars = {
            k: v for k, v in variables.items() if k not in used and k != query_key and k not in
            SHARED_VARS
        }  # fmt: skip
        if extra_vars:
            metadata["vars"] = extra_vars
        shared = {k: variables[k] for k in SHARED_VARS if k in variables}
        own_id = test.get("id", (test.get("metadata") or {}).get("id"))
        if not is_blank(own_id):
            shared["id"] = own_id
            metadata.pop("id", None)
        flat = Row(row.line, row.size, shared, row.index, row.container, row.source)
        context_key = next((k for k in CONTEXT_VARS if k in variables), None)
        response_key = next((k for k in RESPONSE_VARS if k in variables), None)
        case = build_case(
            flat,
            case_id=_test_id(flat, row.index),
            query=query,
            response=optional_text(variables.get(response_key or ""), response_key or "response"),
            reference=reference,
            context=context_items(variables[context_key], context_key) if context_key else None,
            metadata=metadata,
        )
        passages = metadata.get("passages")
        if (
            isinstance(passages, list)
            and all(isinstance(p, str) for p in passages)
            and context_key
            and variables.get(context_key) == CONTEXT_JOINER.join(passages)
        ):
            # An evalhouse export: the passages it joined, exactly (a passage may hold a
            # blank line); a var edited since is read as written.
            metadata.pop("passages")
            case = case.model_copy(update={"context": tuple(passages), "metadata": metadata})
        truth = metadata.pop("ground_truth", None)
        if isinstance(truth, list) and truth:
            try:
                chunks = tuple(GroundTruthChunk.model_validate(t) for t in truth)
            except ValueError as exc:
                raise RowError("'metadata.ground_truth' is not a list of chunks") from exc
            case = case.model_copy(update={"ground_truth": chunks, "metadata": metadata})
        if isinstance(metadata.get("claims"), list):
            claims = _claims(metadata.pop("claims"))  # an evalhouse export keeps them here
            case = case.model_copy(update={"metadata": metadata})
        else:
            claims = ()
        if claims:
            expected = case.expected_answer.model_copy(update={"claims": claims})
            case = case.model_copy(update={"expected_answer": expected})
        return case

    def _query(self, variables: Mapping[str, Any]) -> tuple[str | None, str]:
        for key in QUERY_VARS:
            if not is_blank(variables.get(key)):
                return key, text(variables[key], f"vars.{key}", required=True)
        # The context, a recorded answer or a shared key is never the question.
        skip = {*CONTEXT_VARS, *RESPONSE_VARS, *SHARED_VARS}
        strings = {
            k: v for k, v in variables.items() if isinstance(v, str) and v.strip() and k not in skip
        }
        if len(strings) == 1:
            key = next(iter(strings))
            return key, strings[key]
        if self.prompts and variables:
            rendered = re.sub(
                r"\{\{\s*([\w.]+)\s*\}\}",
                lambda m: str(variables.get(m.group(1), m.group(0))),
                self.prompts[0],
            )
            return None, rendered
        if strings:
            # No prompt to render (a file:// prompt is not read): the var whose name says
            # "the question" best, else the first one, rather than refusing the file.
            key = query_like(strings) or next(iter(strings))
            return key, strings[key]
        raise RowError(
            f"no question var ({', '.join(QUERY_VARS[:4])}) among vars "
            f"{', '.join(sorted(map(str, variables))) or 'none'}; name it with --map"
        )


def _test_id(row: Row, index: int) -> str:
    explicit = row.value.get("id")
    return str(explicit).strip() if not is_blank(explicit) else f"test-{index}"


def _csv_test(value: Mapping[str, Any]) -> dict[str, Any]:
    """A promptfoo CSV row as a test object."""
    test: dict[str, Any] = {"vars": {}, "assert": [], "metadata": {}}
    for key, cell in value.items():
        if key.startswith("__expected"):
            if not is_blank(cell):
                test["assert"].append(parse_expected(str(cell)))
        elif key == "__description":
            test["description"] = cell
        elif key.startswith("__metadata:"):
            if not is_blank(cell):
                test["metadata"][key.split(":", 1)[1]] = cell
        elif key.startswith("__"):
            continue  # __prefix, __suffix, __metric, __threshold, __config: no native field
        else:
            test["vars"][key] = cell
    return test


def _expectations(asserts: list[Any]) -> tuple[str, tuple[str, ...], str]:
    reference, rubric = "", ""
    contains: list[str] = []
    for item in asserts:
        if not isinstance(item, dict):
            continue
        kind, value = str(item.get("type", "")), item.get("value")
        if kind in REFERENCE_TYPES and not reference and isinstance(value, str | int | float):
            reference = str(value)
        elif kind in CLAIM_TYPES:
            contains += [str(v) for v in list_value(value, "assert.value") or [] if str(v).strip()]
        elif kind == "llm-rubric" and isinstance(value, str) and not rubric:
            rubric = value
    return reference, tuple(contains), rubric


def config_prompts(document: Any) -> tuple[str, ...]:
    """Inline prompt strings of a promptfoo config (``file://`` prompts are not read)."""
    prompts = document.get("prompts") if isinstance(document, dict) else None
    if isinstance(prompts, str):
        prompts = [prompts]
    out = []
    for prompt in prompts or ():
        raw = prompt.get("raw") if isinstance(prompt, dict) else prompt
        if isinstance(raw, str) and not raw.startswith("file://"):
            out.append(raw)
    return tuple(out)


def default_test(document: Any) -> dict[str, Any]:
    """The config's ``defaultTest`` (vars and asserts merged into every test)."""
    found = document.get("defaultTest") if isinstance(document, dict) else None
    return found if isinstance(found, dict) else {}


def merge_default(test: dict[str, Any], default: Mapping[str, Any]) -> dict[str, Any]:
    """``test`` with ``defaultTest``'s vars under its own and asserts before its own."""
    if not default:
        return test
    merged = dict(test)
    merged["vars"] = {**(default.get("vars") or {}), **(test.get("vars") or {})}
    merged["assert"] = [*(default.get("assert") or []), *(test.get("assert") or [])]
    return merged


def file_reference(value: Any, base: Path) -> Path | None:
    """The path of a ``file://`` test reference, relative to the config's folder."""
    if isinstance(value, str) and value.startswith("file://"):
        return (base / value.removeprefix("file://")).resolve()
    return None
