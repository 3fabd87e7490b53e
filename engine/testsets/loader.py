"""``load_test_set``: read a file, apply ``--map``, detect the format, convert every row.

Detection looks at the keys of the first row (the header of a CSV) and asks each loader
of ``LOADERS`` in order; the first that says yes converts every row. After conversion
every case gets a domain (``derive_domain``) and, when it has no reference at all, its
retrieved context as ground truth (``ctx#i``), so it is scored for grounding instead of
ending as an error row.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engine.errors import one_line
from engine.models import GroundTruthChunk, TestCase
from engine.testsets.base import (
    MAX_FILE_BYTES,
    MAX_ROW_BYTES,
    FormatLoader,
    LoadedTestSet,
    Problem,
    Row,
    RowError,
    TestSetError,
)
from engine.testsets.conversations import conversation_test_set, looks_like_conversations
from engine.testsets.formats.answer_synthesis import AnswerSynthesisLoader
from engine.testsets.formats.columns import FIELDS, ColumnsLoader
from engine.testsets.formats.datasets import LangfuseLoader, PhoenixLoader
from engine.testsets.formats.deepeval import DeepEvalLoader, HarnessLoader
from engine.testsets.formats.native import NativeLoader
from engine.testsets.formats.promptfoo import PromptfooLoader, config_prompts
from engine.testsets.formats.promptfoo_results import PromptfooResultsLoader
from engine.testsets.formats.ragas import Ragas01Loader, RagasLoader
from engine.testsets.inference import infer_mapping
from engine.testsets.promptfoo_files import expand_tests, prompt_files
from engine.testsets.reading import Container, decode, read_bytes, read_container
from engine.testsets.traces import TraceFile, read_traces
from engine.testsets.values import first_url, host_of


def _loaders(prompts: tuple[str, ...], mapped: bool) -> tuple[FormatLoader, ...]:
    """The loaders in detection order; native (strict) is left out when columns are mapped."""
    chain: list[FormatLoader] = [] if mapped else [NativeLoader()]
    chain += [
        PromptfooResultsLoader(),
        PromptfooLoader(prompts),
        RagasLoader(),
        Ragas01Loader(),
        LangfuseLoader(),
        DeepEvalLoader(),
        PhoenixLoader(),
        AnswerSynthesisLoader(),
        HarnessLoader(),
        ColumnsLoader(),
    ]
    return tuple(chain)


_URL_KEYS = ("url", "page_url", "source_url", "source", "link", "website")


def load_test_set(
    path: Path,
    *,
    strict: bool = False,
    max_row_bytes: int = MAX_ROW_BYTES,
    column_map: Mapping[str, str] | None = None,
    max_file_bytes: int = MAX_FILE_BYTES,
) -> LoadedTestSet:
    """Load a test set in any supported format (see ``engine.testsets``).

    ``column_map`` renames columns/keys (``{"question_text": "query"}``) before detection;
    a mapped column the file lacks is a ``TestSetError``. Bad rows are skipped and listed
    in ``problems``; with ``strict`` they raise ``TestSetError`` instead. File-level
    problems always raise ``TestSetError``.
    """
    path = Path(path)
    name = one_line(str(path))
    raw = read_bytes(path, name, max_file_bytes)
    digest = hashlib.sha256(raw).hexdigest()
    text = decode(name, raw)
    if not text.strip():
        raise TestSetError(f"{name}: empty file (no test cases)")
    traces = read_traces(name, text)
    if traces is not None:
        return _trace_test_set(path, digest, traces, strict=strict)
    container = read_container(name, path.suffix.lower(), text, max_row_bytes)
    first = container.rows[0].value if container.rows else None
    if not column_map and looks_like_conversations(container.kind, container.header, first):
        return conversation_test_set(path)
    prompts: tuple[str, ...] = ()
    if container.kind == "yaml" or _is_promptfoo_json(container):
        from_files, missing = prompt_files(container.document, path.parent)
        prompts = config_prompts(container.document) + from_files
        container.problems.extend(missing)
        expand_tests(container, path.parent, max_row_bytes, max_file_bytes, len(raw))
    mapping = dict(column_map or {})
    if mapping:
        _apply_map(name, container, mapping)
    loaders = _loaders(prompts, bool(mapping))
    inferred = ""
    if not mapping and _undetected(container, loaders):
        # No format's layout: read the columns' names for what they hold.
        inference = infer_mapping(_columns(container), FIELDS)
        if "query" in inference.mapping.values():
            _apply_map(name, container, inference.mapping)
            inferred = inference.describe()
    loader = _detect(name, container, loaders)
    problems = list(container.problems)
    cases = _convert(name, container.rows, loader, problems, path.stem)
    problems.sort(key=lambda p: (p.file != name, p.file, p.line))
    if strict and problems:
        raise TestSetError(_summary(name, problems, "refused (strict)"), problems)
    if not cases:
        detail = _summary(name, problems, "no valid test case") if problems else ""
        raise TestSetError(detail or f"{name}: no test cases", problems)
    fmt = f"{loader.name}-{container.kind}"
    return LoadedTestSet(path, fmt, digest, tuple(cases), tuple(problems), mapping, inferred)


def _trace_test_set(path: Path, digest: str, traces: TraceFile, *, strict: bool) -> LoadedTestSet:
    """A trace file's cases completed like any format's; the domain falls back to the
    trace's service rather than the file name (an export is named by date, not product)."""
    name = one_line(str(path))
    if strict and traces.problems:
        raise TestSetError(_summary(name, list(traces.problems), "refused (strict)"))
    cases = tuple(
        _complete(case, str(case.metadata.get("service") or path.stem)) for case in traces.cases
    )
    return LoadedTestSet(path, traces.format, digest, cases, traces.problems, series=traces.series)


def _convert(
    name: str, rows: list[Row], loader: FormatLoader, problems: list[Problem], stem: str
) -> list[TestCase]:
    cases: list[TestCase] = []
    first_line: dict[str, int] = {}
    for row in rows:
        where = str(row.source) if row.source else name
        try:
            case = _complete(loader.load(row), stem)
        except RowError as exc:
            problems.append(Problem(where, row.line, str(exc)))
            continue
        if case.id in first_line:
            reason = f"duplicate id {case.id!r} (first on line {first_line[case.id]}); row skipped"
            problems.append(Problem(where, row.line, reason))
            continue
        first_line[case.id] = row.line
        cases.append(case)
    return cases


def _is_promptfoo_json(container: Container) -> bool:
    doc = container.document
    return isinstance(doc, dict) and isinstance(doc.get("tests"), list)


def _apply_map(name: str, container: Container, mapping: dict[str, str]) -> None:
    """Rename mapped columns in every row; refuse unknown targets and absent columns."""
    for column, field in mapping.items():
        if field not in FIELDS:
            raise TestSetError(
                f"--map {column}={field}: unknown field {field!r}; fields: {', '.join(FIELDS)}"
            )
    present: set[str] = set(container.header)
    for row in container.rows[:1000]:
        present.update(row.value)
    if container.kind == "csv":
        mapping = {k.lower(): v for k, v in mapping.items()}
    for column, field in mapping.items():
        if column not in present:
            shown = ", ".join(one_line(c) for c in sorted(present)[:15]) or "none"
            raise TestSetError(
                f"{name}: --map {one_line(column)}={field}: column {column!r} is not in the file "
                f"(columns: {shown})"
            )
    # Two columns into one field, or a column onto one the file already has: one of the
    # two would be dropped without a word.
    into: dict[str, str] = {}
    for column, field in mapping.items():
        if field in into:
            raise TestSetError(
                f"{name}: --map sends both {into[field]!r} and {column!r} to {field!r}; "
                "map one of them"
            )
        into[field] = column
        if field in present and field not in mapping and field != column:
            raise TestSetError(
                f"{name}: --map {column}={field}: the file already has a {field!r} column; "
                f"map that one elsewhere too, or drop this mapping"
            )
    for row in container.rows:
        for column, field in mapping.items():
            if column in row.value:
                row.value[field] = row.value.pop(column)
    if container.header:
        container.header = tuple(mapping.get(c, c) for c in container.header)


def _columns(container: Container) -> list[str]:
    """Column names of a table, or the keys of the first rows of a JSON container."""
    if container.header:
        return list(container.header)
    keys: dict[str, None] = {}
    for row in container.rows[:100]:
        keys.update(dict.fromkeys(row.value))
    return list(keys)


def _undetected(container: Container, loaders: tuple[FormatLoader, ...]) -> bool:
    """Whether no format recognises the container's layout."""
    first: Mapping[str, Any] = container.rows[0].value if container.rows else {}
    keys = frozenset(container.header or first)
    if container.kind in ("jsonl", "json") and keys & {"id", "query"}:
        return False
    return bool(keys) and not any(f.detect(keys, first, container.kind) for f in loaders)


def _detect(name: str, container: Container, loaders: tuple[FormatLoader, ...]) -> FormatLoader:
    first: Mapping[str, Any] = container.rows[0].value if container.rows else {}
    keys = frozenset(container.header or first)
    for loader in loaders:
        if loader.detect(keys, first, container.kind):
            missing = [c for c in loader.required if c not in keys]
            if container.kind == "csv" and missing:
                raise TestSetError(f"{name}: line 1: missing column(s) {', '.join(missing)}")
            return loader
    if container.kind in ("jsonl", "json") and (not first or keys & {"id", "query"}):
        return loaders[0]  # a broken native file: let validation name each row's problem
    found = ", ".join(one_line(k) for k in sorted(keys)[:15]) or "nothing"
    hint = (
        "the header needs input+expected_output (harness/DeepEval), user_input or "
        "question+contexts (RAGAS), __expected (promptfoo) or query"
    )
    kind = "CSV" if container.kind == "csv" else "test-set"
    raise TestSetError(
        f"{name}: unknown {kind} format: {hint}; found {found}; "
        "or map your columns with --map COLUMN=query (see evalhouse inspect)"
    )


def _complete(case: TestCase, stem: str) -> TestCase:
    """Fill the domain, and score a reference-less case against its context."""
    update: dict[str, Any] = {}
    if not case.domain.strip():
        update["domain"] = derive_domain(case, stem)
    has_reference = case.expected_answer.text.strip() or case.expected_answer.claims
    if not has_reference and not case.ground_truth and case.context:
        update["ground_truth"] = tuple(
            GroundTruthChunk(chunk_id=f"ctx#{i}", text=passage)
            for i, passage in enumerate(case.context)
            if passage.strip()
        )
    return case.model_copy(update=update) if update else case


def derive_domain(case: TestCase, fallback: str) -> str:
    """A ``domain`` metadata key, else the host of a ground-truth, metadata or context
    URL, else ``fallback`` (the test set's name). Never empty."""
    meta_domain = case.metadata.get("domain")
    if isinstance(meta_domain, str) and meta_domain.strip():
        return meta_domain.strip()
    for chunk in case.ground_truth:
        host = host_of(chunk.page_url)
        if host:
            return host
    for key in _URL_KEYS:
        value = case.metadata.get(key)
        if isinstance(value, str) and host_of(value):
            return host_of(value)
    host = host_of(first_url(case.effective_context))
    return host or fallback or "unknown"


def _summary(name: str, problems: list[Problem], what: str) -> str:
    if len(problems) == 1:
        return f"{name}: {what}: {problems[0]}"  # one refusal, one line
    shown = "\n".join(f"  {p}" for p in problems[:20])
    more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
    return f"{name}: {what}: {len(problems)} problem(s)\n{shown}{more}"
