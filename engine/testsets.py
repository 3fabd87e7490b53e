"""Test-set loaders: every supported format becomes a tuple of native ``TestCase``.

Formats, detected from the extension and then the content:

``native-jsonl`` (``.jsonl``/``.ndjson``, objects with ``id`` and ``query``)
    The native format of DESIGN.md, one ``TestCase`` per line. A ``.json`` file holding
    an array of native objects is read the same way (``native-json``).

``answer-synthesis-json`` (``.json``: an array, or ``{"testCases": [...]}``)
    Objects with ``queryLogId`` -> ``id``, ``question`` -> ``query``, ``answer`` ->
    ``response`` and ``context`` -> ``context``. Context items may be strings (kept as
    they are) or objects (for example ``AggregatedCourseSkills`` with matched learning
    outcomes): an object with a ``text``/``content``/``passage``/``chunk`` string
    becomes that string; any other object is rendered as ``key: value`` lines (lists
    joined with ``; ``, nested objects as compact JSON) so a judge reads it as prose.
    Other keys of the case go to ``metadata``.

``harness-csv`` (``.csv`` with ``input`` and ``expected_output`` columns)
    ``input`` -> ``query``, ``expected_output`` -> ``expected_answer.text``, optional
    ``context`` (a JSON array of strings, else one passage), optional ``metadata`` (a
    JSON object as text), optional ``id`` (else ``row-N``, N the 1-based data row), and
    optional ``output``/``response`` (a recorded response). Any other column goes to
    ``metadata`` as text, as in the harness.

``ragas-jsonl`` / ``ragas-csv`` (``user_input`` column or key)
    ``user_input`` -> ``query``, ``response`` -> ``response``, ``retrieved_contexts`` ->
    ``context``, ``reference`` -> ``expected_answer.text``, ``reference_contexts`` ->
    ``ground_truth`` (chunk ids ``ref#i``). In CSV, list cells may be JSON or the Python
    list repr RAGAS writes. ``id`` is optional (else ``row-N``).

Problems are data too: every bad row is recorded as a ``Problem`` (file, line, reason)
and skipped; ``strict=True`` raises ``TestSetError`` listing them instead. Problems with
the file as a whole (empty, not UTF-8, unknown format, not parseable, no valid case)
always raise, with a message naming the file.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import io
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from engine.errors import InputError
from engine.models import ExpectedAnswer, GroundTruthChunk, TestCase

MAX_ROW_BYTES = 1_000_000
"""Largest row (JSONL line, CSV record or JSON array element) accepted, in bytes."""

_BOM = b"\xef\xbb\xbf"
_TEXT_KEYS = ("text", "content", "passage", "chunk", "page_content")


class TestSetError(InputError):
    """The test set cannot be used; the message names the file and every problem."""

    __test__ = False  # not a pytest class

    def __init__(self, message: str, problems: Sequence[Problem] = ()) -> None:
        super().__init__(message)
        self.problems = tuple(problems)


@dataclass(frozen=True)
class Problem:
    """One bad row (or the whole file when ``line`` is 0) and why."""

    file: str
    line: int
    reason: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.reason}"


@dataclass(frozen=True)
class LoadedTestSet:
    """A parsed test set: the valid cases, the rows that were skipped, and the file hash."""

    path: Path
    format: str
    sha256: str
    cases: tuple[TestCase, ...]
    problems: tuple[Problem, ...] = ()

    @property
    def name(self) -> str:
        """The file name without its extension (``acme.jsonl`` -> ``acme``)."""
        return self.path.stem


@dataclass(frozen=True)
class _Row:
    """One raw row before conversion: its 1-based line and its size in bytes."""

    line: int
    size: int
    value: Any
    index: int = 0
    """1-based position among the data rows (bad rows included), for ``row-N`` ids."""


class _RowError(ValueError):
    """A row cannot become a test case."""


# ----------------------------------------------------------------------------- public


def load_test_set(
    path: Path, *, strict: bool = False, max_row_bytes: int = MAX_ROW_BYTES
) -> LoadedTestSet:
    """Load a test set in any supported format (see the module docstring).

    Bad rows are skipped and listed in ``problems``; with ``strict`` they raise
    ``TestSetError`` instead. File-level problems always raise ``TestSetError``.
    """
    path = Path(path)
    name = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise TestSetError(f"{name}: cannot read test set ({exc.strerror or exc})") from exc
    digest = hashlib.sha256(raw).hexdigest()
    text = _decode(name, raw)
    if not text.strip():
        raise TestSetError(f"{name}: empty file (no test cases)")
    fmt, rows, problems = _parse(name, path.suffix.lower(), text, max_row_bytes)
    cases: list[TestCase] = []
    first_line: dict[str, int] = {}
    for row in rows:
        try:
            case = _CONVERTERS[fmt](row)
        except _RowError as exc:
            problems.append(Problem(name, row.line, str(exc)))
            continue
        if case.id in first_line:
            problems.append(
                Problem(
                    name,
                    row.line,
                    f"duplicate id {case.id!r} (first on line {first_line[case.id]}); row skipped",
                )
            )
            continue
        first_line[case.id] = row.line
        cases.append(case)
    problems.sort(key=lambda p: p.line)
    if strict and problems:
        raise TestSetError(_summary(name, problems, "refused (strict)"), problems)
    if not cases:
        detail = _summary(name, problems, "no valid test case") if problems else ""
        raise TestSetError(detail or f"{name}: no test cases", problems)
    return LoadedTestSet(path, fmt, digest, tuple(cases), tuple(problems))


def case_hash(case: TestCase) -> str:
    """sha256 of the canonical JSON of a case: changes when anything in the case changes."""
    blob = json.dumps(case.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


# ----------------------------------------------------------------------------- decoding


def _summary(name: str, problems: Sequence[Problem], what: str) -> str:
    shown = "\n".join(f"  {p}" for p in problems[:20])
    more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
    return f"{name}: {what}: {len(problems)} problem(s)\n{shown}{more}"


def _decode(name: str, raw: bytes) -> str:
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise TestSetError(
            f"{name}: file is UTF-16 (byte-order mark at byte offset 0); save it as UTF-8"
        )
    if raw.startswith(_BOM):
        raw = raw[len(_BOM) :]  # a UTF-8 BOM is legal and common from spreadsheet exports
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        bad = raw[exc.start : exc.start + 1].hex()
        raise TestSetError(
            f"{name}: not UTF-8: invalid byte 0x{bad} at byte offset {exc.start} "
            f"(line {line}); save the file as UTF-8"
        ) from exc


def _parse(name: str, suffix: str, text: str, limit: int) -> tuple[str, list[_Row], list[Problem]]:
    problems: list[Problem] = []
    if suffix in (".jsonl", ".ndjson"):
        return _parse_jsonl(name, text, limit, problems)
    if suffix == ".json":
        return _parse_json(name, text, limit, problems)
    if suffix in (".csv", ".tsv"):
        return _parse_csv(name, text, limit, problems, "\t" if suffix == ".tsv" else ",")
    # Unknown extension: sniff the content, and say clearly when that fails too.
    stripped = text.lstrip()
    if stripped.startswith("["):
        return _parse_json(name, text, limit, problems)
    if stripped.startswith("{"):
        try:
            json.loads(text)
        except json.JSONDecodeError:
            return _parse_jsonl(name, text, limit, problems)
        return _parse_json(name, text, limit, problems)
    first = stripped.splitlines()[0] if stripped else ""
    if "," in first and any(c in first.lower() for c in ("input", "user_input")):
        return _parse_csv(name, text, limit, problems, ",")
    raise TestSetError(
        f"{name}: unknown test-set format (extension {suffix or 'none'!r}, content is not "
        "JSON, JSONL or a CSV with an input/user_input header); supported: .jsonl, .json, .csv"
    )


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _parse_jsonl(
    name: str, text: str, limit: int, problems: list[Problem]
) -> tuple[str, list[_Row], list[Problem]]:
    rows: list[_Row] = []
    index = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        index += 1
        size = len(line.encode("utf-8"))
        if size > limit:
            problems.append(Problem(name, number, _too_big(size, limit)))
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(Problem(name, number, f"invalid JSON: {exc.msg} (column {exc.colno})"))
            continue
        if not isinstance(value, dict):
            problems.append(
                Problem(name, number, f"expected a JSON object, got {type(value).__name__}")
            )
            continue
        rows.append(_Row(number, size, value, index))
    fmt = "ragas-jsonl" if rows and "user_input" in rows[0].value else "native-jsonl"
    if rows and fmt == "native-jsonl" and "query" not in rows[0].value:
        if "question" in rows[0].value or "queryLogId" in rows[0].value:
            fmt = "answer-synthesis-json"
        elif "input" in rows[0].value:
            fmt = "harness-jsonl"
    return fmt, rows, problems


def _too_big(size: int, limit: int) -> str:
    return f"row is {size:,} bytes, over the {limit:,}-byte limit per row; row skipped"


def _parse_json(
    name: str, text: str, limit: int, problems: list[Problem]
) -> tuple[str, list[_Row], list[Problem]]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TestSetError(
            f"{name}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from exc
    if isinstance(doc, dict):
        if "testCases" not in doc:
            raise TestSetError(
                f"{name}: a JSON object test set needs a 'testCases' array "
                f"(found keys: {', '.join(sorted(doc)[:10]) or 'none'})"
            )
        items = doc["testCases"]
        if not isinstance(items, list):
            raise TestSetError(f"{name}: 'testCases' must be an array, got {type(items).__name__}")
        start = _array_start(text, after_key="testCases")
    elif isinstance(doc, list):
        items = doc
        start = _array_start(text, after_key=None)
    else:
        raise TestSetError(
            f"{name}: expected a JSON array or an object with 'testCases', got {type(doc).__name__}"
        )
    if not items:
        raise TestSetError(f"{name}: empty test set (the array has no test cases)")
    positions = _element_offsets(text, start, len(items))
    rows: list[_Row] = []
    for index, item in enumerate(items):
        begin, end = positions[index] if index < len(positions) else (0, 0)
        line = _line_of(text, begin) if positions else index + 1
        size = len(text[begin:end].encode("utf-8")) if positions else len(json.dumps(item))
        if size > limit:
            problems.append(Problem(name, line, _too_big(size, limit)))
            continue
        if not isinstance(item, dict):
            problems.append(
                Problem(
                    name, line, f"element {index}: expected an object, got {type(item).__name__}"
                )
            )
            continue
        rows.append(_Row(line, size, item, index + 1))
    first = rows[0].value if rows else {}
    if "query" in first and "id" in first:
        fmt = "native-json"
    elif "user_input" in first:
        fmt = "ragas-json"
    else:
        fmt = "answer-synthesis-json"
    return fmt, rows, problems


def _array_start(text: str, *, after_key: str | None) -> int | None:
    """Offset just after the '[' of the case array, or None when it cannot be found."""
    if after_key is None:
        i = text.find("[")
        return i + 1 if i >= 0 else None
    decoder = json.JSONDecoder()
    # Walk the top-level object key by key so a nested "testCases" is never mistaken.
    i = text.find("{") + 1
    while True:
        while i < len(text) and text[i] in " \t\r\n,":
            i += 1
        if i >= len(text) or text[i] == "}":
            return None
        try:
            key, i = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            return None
        while i < len(text) and text[i] in " \t\r\n:":
            i += 1
        if key == after_key and i < len(text) and text[i] == "[":
            return i + 1
        try:
            _, i = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            return None


def _element_offsets(text: str, start: int | None, count: int) -> list[tuple[int, int]]:
    if start is None:
        return []
    decoder = json.JSONDecoder()
    out: list[tuple[int, int]] = []
    i = start
    for _ in range(count):
        while i < len(text) and text[i] in " \t\r\n,":
            i += 1
        try:
            _, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            return []
        out.append((i, end))
        i = end
    return out


def _parse_csv(
    name: str, text: str, limit: int, problems: list[Problem], delimiter: str
) -> tuple[str, list[_Row], list[Problem]]:
    csv.field_size_limit(max(limit * 4, 131072))  # our own per-row limit applies below
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        header = next(reader)
    except StopIteration as exc:
        raise TestSetError(f"{name}: empty file (no header row)") from exc
    except csv.Error as exc:
        raise TestSetError(f"{name}: line 1: unreadable CSV header ({exc})") from exc
    columns = [h.strip().lower() for h in header]
    required: tuple[str, ...]
    if "user_input" in columns:
        fmt, required = "ragas-csv", ("user_input",)
    elif "input" in columns:
        fmt, required = "harness-csv", ("input", "expected_output")
    else:
        raise TestSetError(
            f"{name}: unknown CSV format: the header needs 'input' and 'expected_output' "
            f"(harness) or 'user_input' (RAGAS); found {', '.join(columns) or 'nothing'}"
        )
    missing = [c for c in required if c not in columns]
    if missing:
        raise TestSetError(f"{name}: line 1: missing column(s) {', '.join(missing)}")
    dupes = sorted({c for c in columns if columns.count(c) > 1})
    if dupes:
        raise TestSetError(f"{name}: line 1: duplicate column(s) {', '.join(dupes)}")
    rows: list[_Row] = []
    data_index = 0
    previous_end = reader.line_num
    while True:
        try:
            record = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            problems.append(Problem(name, previous_end + 1, f"unreadable CSV row ({exc})"))
            # The csv module cannot resynchronise inside a broken quote: stop here.
            break
        line = previous_end + 1
        previous_end = reader.line_num
        if not any(cell.strip() for cell in record):
            continue
        data_index += 1
        size = sum(len(cell.encode("utf-8")) for cell in record)
        if size > limit:
            problems.append(Problem(name, line, _too_big(size, limit)))
            continue
        if len(record) != len(columns):
            problems.append(
                Problem(name, line, f"row has {len(record)} fields, header has {len(columns)}")
            )
            continue
        rows.append(_Row(line, size, dict(zip(columns, record, strict=True)), data_index))
    if not rows and not problems:
        raise TestSetError(f"{name}: no data rows after the header")
    return fmt, rows, problems


# ----------------------------------------------------------------------------- converters


def _validated(data: Mapping[str, Any]) -> TestCase:
    try:
        return TestCase.model_validate(data)
    except ValidationError as exc:
        reasons = []
        for err in exc.errors()[:5]:
            where = ".".join(str(p) for p in err["loc"]) or "case"
            reasons.append(f"{where}: {err['msg']}")
        raise _RowError("; ".join(reasons)) from exc


def _native(row: _Row) -> TestCase:
    return _validated(row.value)


def _text(value: Any, field: str, *, required: bool = False) -> str:
    if value is None:
        if required:
            raise _RowError(f"missing '{field}'")
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise _RowError(f"'{field}' must be text, got {type(value).__name__}")
    text = str(value)
    if required and not text.strip():
        raise _RowError(f"'{field}' is empty")
    return text


def _render_context_object(obj: Mapping[str, Any]) -> str:
    for key in _TEXT_KEYS:
        if isinstance(obj.get(key), str) and obj[key].strip():
            return str(obj[key])
    lines = []
    for key, value in obj.items():
        if isinstance(value, list):
            parts = [
                v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, sort_keys=True)
                for v in value
            ]
            lines.append(f"{key}: {'; '.join(parts)}")
        elif isinstance(value, dict):
            lines.append(f"{key}: {json.dumps(value, ensure_ascii=False, sort_keys=True)}")
        else:
            lines.append(f"{key}: {value}")
    return "\n".join(lines)


def _context_items(value: Any, field: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return (value,) if value.strip() else ()
    if not isinstance(value, list):
        raise _RowError(
            f"'{field}' must be a list of strings or objects, got {type(value).__name__}"
        )
    out = []
    for i, item in enumerate(value):
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            out.append(_render_context_object(item))
        else:
            raise _RowError(
                f"'{field}[{i}]' must be a string or an object, got {type(item).__name__}"
            )
    return tuple(out)


def _answer_synthesis(row: _Row) -> TestCase:
    value = row.value
    known = {"queryLogId", "question", "answer", "context"}
    case_id = _text(value.get("queryLogId", value.get("id")), "queryLogId", required=True)
    return _validated(
        {
            "id": case_id,
            "query": _text(value.get("question"), "question", required=True),
            "response": _text(value["answer"], "answer") if "answer" in value else None,
            "context": _context_items(value.get("context"), "context"),
            "metadata": {k: v for k, v in value.items() if k not in known and k != "id"},
        }
    )


def _list_cell(cell: str, field: str) -> list[Any] | None:
    """A list written in a CSV cell: JSON, else the Python repr RAGAS exports."""
    if not cell.strip():
        return None
    try:
        value = json.loads(cell)
    except json.JSONDecodeError:
        try:
            value = ast.literal_eval(cell)
        except (ValueError, SyntaxError) as exc:
            raise _RowError(f"'{field}' is not a JSON or Python list") from exc
    if isinstance(value, tuple):
        value = list(value)
    if not isinstance(value, list):
        raise _RowError(f"'{field}' must hold a list, got {type(value).__name__}")
    return value


def _row_id(row: _Row) -> str:
    explicit = row.value.get("id")
    if explicit is not None and str(explicit).strip():
        return str(explicit).strip()
    return f"row-{row.index}"


def _harness(row: _Row) -> TestCase:
    value = row.value
    metadata: dict[str, Any] = {}
    raw_meta = value.get("metadata")
    if isinstance(raw_meta, dict):
        metadata.update(raw_meta)
    elif isinstance(raw_meta, str) and raw_meta.strip():
        try:
            parsed = json.loads(raw_meta)
        except json.JSONDecodeError as exc:
            raise _RowError(f"'metadata' is not valid JSON ({exc.msg})") from exc
        if not isinstance(parsed, dict):
            raise _RowError(f"'metadata' must be a JSON object, got {type(parsed).__name__}")
        metadata.update(parsed)
    context: tuple[str, ...] | None = None
    raw_context = value.get("context")
    if isinstance(raw_context, list):
        context = _context_items(raw_context, "context")
    elif isinstance(raw_context, str) and raw_context.strip():
        context = (raw_context,)
        if raw_context.lstrip().startswith("["):
            try:
                parsed_ctx = json.loads(raw_context)
            except json.JSONDecodeError:
                parsed_ctx = None
            if isinstance(parsed_ctx, list):
                context = _context_items(parsed_ctx, "context")
    known = {"id", "input", "expected_output", "context", "metadata", "output", "response"}
    for key, cell in value.items():
        if key not in known and cell not in ("", None):
            metadata.setdefault(key, cell)
    response = value.get("output") or value.get("response")
    return _validated(
        {
            "id": _row_id(row),
            "query": _text(value.get("input"), "input", required=True),
            "response": _text(response, "output") if response not in (None, "") else None,
            "expected_answer": ExpectedAnswer(
                text=_text(value.get("expected_output"), "expected_output")
            ),
            "context": context,
            "metadata": metadata,
        }
    )


def _ragas(row: _Row) -> TestCase:
    value = row.value
    contexts = value.get("retrieved_contexts")
    refs = value.get("reference_contexts")
    if isinstance(contexts, str):
        contexts = _list_cell(contexts, "retrieved_contexts")
    if isinstance(refs, str):
        refs = _list_cell(refs, "reference_contexts")
    ground_truth = tuple(
        GroundTruthChunk(chunk_id=f"ref#{i}", text=text)
        for i, text in enumerate(_context_items(refs, "reference_contexts") or ())
        if text.strip()
    )
    known = {"id", "user_input", "response", "retrieved_contexts", "reference"}
    known |= {"reference_contexts"}
    response = value.get("response")
    return _validated(
        {
            "id": _row_id(row),
            "query": _text(value.get("user_input"), "user_input", required=True),
            "response": _text(response, "response") if response not in (None, "") else None,
            "expected_answer": ExpectedAnswer(text=_text(value.get("reference"), "reference")),
            "context": _context_items(contexts, "retrieved_contexts"),
            "ground_truth": ground_truth,
            "metadata": {k: v for k, v in value.items() if k not in known and v not in ("", None)},
        }
    )


_CONVERTERS = {
    "native-jsonl": _native,
    "native-json": _native,
    "answer-synthesis-json": _answer_synthesis,
    "harness-csv": _harness,
    "harness-jsonl": _harness,
    "ragas-jsonl": _ragas,
    "ragas-json": _ragas,
    "ragas-csv": _ragas,
}


def iter_formats() -> Iterator[str]:
    """The format names ``LoadedTestSet.format`` can take."""
    return iter(_CONVERTERS)
