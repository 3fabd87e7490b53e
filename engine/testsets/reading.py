"""Reading a test-set file into raw rows: bounded, decoded, and split by container.

Containers: ``jsonl`` (one object per line), ``json`` (an array, or an object holding the
array under ``testCases``, ``tests``, ``data`` or ``examples``), ``csv``/``tsv`` (a
header row; pandas index columns are dropped) and ``yaml`` (a promptfoo config's
``tests:``, or a list of test objects). Every row keeps its 1-based line number.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.files import (
    MAX_DEPTH,
    TooDeep,
    UserFileError,
    depth_over,
    json_loads,
    load_yaml,
    read_user_bytes,
)
from engine.testsets.base import MAX_FILE_BYTES, Problem, Row, TestSetError
from engine.testsets.formats.promptfoo_results import (
    is_result_table,
    nested_results,
    table_results,
)
from engine.testsets.values import is_index_column

_BOM = b"\xef\xbb\xbf"
ARRAY_KEYS = ("testCases", "tests", "data", "examples")
"""Keys of a JSON object that hold the case array (answer synthesis, promptfoo, Langfuse
API pages, Phoenix)."""


@dataclass
class Container:
    """The rows of one file, the rows that could not be read, and the document itself."""

    kind: str
    rows: list[Row]
    problems: list[Problem] = field(default_factory=list)
    header: tuple[str, ...] = ()
    """CSV columns after dropping index columns (empty for JSON containers)."""
    document: Any = None
    """The parsed JSON/YAML document, for formats that read more than the rows."""


def read_bytes(path: Path, name: str, max_file_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The file's bytes: a regular file only, refused when over ``max_file_bytes`` before
    it is read, and never read past the limit (``/dev/zero`` reports size 0)."""
    try:
        return read_user_bytes(path, "test set", max_file_bytes, name)
    except UserFileError as exc:
        raise TestSetError(str(exc)) from exc


def decode(name: str, raw: bytes) -> str:
    """UTF-8 text (a UTF-8 BOM is dropped); UTF-16 and bad bytes are refused by offset."""
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


def read_container(name: str, suffix: str, text: str, limit: int) -> Container:
    """Split ``text`` into rows by the extension, else by sniffing the content."""
    if suffix in (".jsonl", ".ndjson"):
        return parse_jsonl(name, text, limit)
    if suffix == ".json":
        return parse_json(name, text, limit)
    if suffix in (".csv", ".tsv"):
        return parse_csv(name, text, limit, "\t" if suffix == ".tsv" else ",")
    if suffix in (".yaml", ".yml"):
        return parse_yaml(name, text, limit)
    stripped = text.lstrip()
    if stripped.startswith("["):
        return parse_json(name, text, limit)
    if stripped.startswith("{"):
        try:
            json_loads(text, max_depth=None)
        except json.JSONDecodeError:
            return parse_jsonl(name, text, limit)
        return parse_json(name, text, limit)
    first = stripped.splitlines()[0] if stripped else ""
    if "," in first and any(c in first.lower() for c in ("input", "question", "query")):
        return parse_csv(name, text, limit, ",")
    raise TestSetError(
        f"{name}: unknown test-set format (extension {suffix or 'none'!r}, content is not "
        "JSON, JSONL or a CSV with a question/input header); supported: .jsonl, .json, "
        ".csv, .yaml"
    )


def too_big(size: int, limit: int) -> str:
    """The reason of a row over the size limit."""
    return f"row is {size:,} bytes, over the {limit:,}-byte limit per row; row skipped"


def parse_jsonl(name: str, text: str, limit: int) -> Container:
    """One JSON object per non-blank line."""
    out = Container("jsonl", [])
    index = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        index += 1
        size = len(line.encode("utf-8"))
        if size > limit:
            out.problems.append(Problem(name, number, too_big(size, limit)))
            continue
        try:
            value = json_loads(line)
        except json.JSONDecodeError as exc:
            column = "" if isinstance(exc, TooDeep) else f" (column {exc.colno})"
            reason = f"invalid JSON: {exc.msg}{column}"
            out.problems.append(Problem(name, number, reason))
            continue
        if not isinstance(value, dict):
            reason = f"expected a JSON object, got {type(value).__name__}"
            out.problems.append(Problem(name, number, reason))
            continue
        out.rows.append(Row(number, size, value, index, container="jsonl"))
    return out


def parse_json(name: str, text: str, limit: int) -> Container:
    """A JSON array of objects, or an object holding one under an ``ARRAY_KEYS`` key."""
    try:
        doc = json_loads(text, max_depth=None)  # depth is checked per case below
    except TooDeep as exc:
        raise TestSetError(f"{name}: invalid JSON: {exc.msg}") from exc
    except json.JSONDecodeError as exc:
        raise TestSetError(
            f"{name}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from exc
    key: str | None = None
    nested = nested_results(doc)
    if nested is not None:
        items = nested  # promptfoo's eval output / export: results.results
    elif isinstance(doc, dict):
        key = next((k for k in ARRAY_KEYS if isinstance(doc.get(k), list)), None)
        if key is None:
            if "testCases" in doc:
                got = type(doc["testCases"]).__name__
                raise TestSetError(f"{name}: 'testCases' must be an array, got {got}")
            raise TestSetError(
                f"{name}: a JSON object test set needs a 'testCases' array "
                f"(found keys: {', '.join(sorted(doc)[:10]) or 'none'}); promptfoo 'tests', "
                "Langfuse 'data' and Phoenix 'examples' arrays are read too"
            )
        items = doc[key]
    elif isinstance(doc, list):
        items = doc
    else:
        raise TestSetError(
            f"{name}: expected a JSON array or an object with 'testCases', got {type(doc).__name__}"
        )
    if not items:
        raise TestSetError(f"{name}: empty test set (the array has no test cases)")
    start = _nested_start(text) if nested is not None else _array_start(text, after_key=key)
    positions = _element_offsets(text, start, len(items))
    out = Container("json", [], document=doc)
    for index, item in enumerate(items):
        begin, end = positions[index] if index < len(positions) else (0, 0)
        line = _line_of(text, begin) if positions else index + 1
        size = len(text[begin:end].encode("utf-8")) if positions else len(json.dumps(item))
        if size > limit:
            out.problems.append(Problem(name, line, too_big(size, limit)))
            continue
        if not isinstance(item, dict):
            reason = f"element {index}: expected an object, got {type(item).__name__}"
            out.problems.append(Problem(name, line, reason))
            continue
        if depth_over(item):
            reason = f"element {index}: nested too deeply (over {MAX_DEPTH} levels); row skipped"
            out.problems.append(Problem(name, line, reason))
            continue
        out.rows.append(Row(line, size, item, index + 1))
    return out


def parse_yaml(name: str, text: str, limit: int) -> Container:
    """A promptfoo config (``tests:`` inline, or ``file://`` references kept for the
    promptfoo loader) or a YAML list of test objects."""
    try:
        doc = load_yaml(text, name)
    except UserFileError as exc:
        raise TestSetError(str(exc)) from exc
    items: Any = doc
    nested = nested_results(doc)
    if nested is not None:
        items = nested  # promptfoo's eval output / export in YAML: results.results
    elif isinstance(doc, dict):
        if "tests" not in doc:
            found = ", ".join(sorted(map(str, doc))[:10]) or "none"
            raise TestSetError(f"{name}: a YAML test set needs a 'tests:' list (found: {found})")
        items = doc["tests"]
    if isinstance(items, str):
        items = [items]  # tests: file://cases.csv
    if not isinstance(items, list) or not items:
        raise TestSetError(f"{name}: 'tests' must be a non-empty list or a file:// reference")
    lines = [i + 1 for i, line in enumerate(text.splitlines()) if line.lstrip().startswith("- ")]
    out = Container("yaml", [], document=doc)
    for index, item in enumerate(items):
        line = lines[index] if index < len(lines) else index + 1
        if isinstance(item, str):
            item = {"__file__": item}
        if not isinstance(item, dict):
            reason = f"test {index}: expected a mapping, got {type(item).__name__}"
            out.problems.append(Problem(name, line, reason))
            continue
        size = len(json.dumps(item, default=str).encode("utf-8"))
        if size > limit:
            out.problems.append(Problem(name, line, too_big(size, limit)))
            continue
        out.rows.append(Row(line, size, item, index + 1, container="yaml"))
    return out


def _nested_start(text: str) -> int | None:
    """Offset just after the '[' of ``results.results`` (the outer ``results`` holds an
    object, so the first ``"results": [`` is the inner array); None when not found."""
    match = re.search(r'"results"\s*:\s*\[', text)
    return match.end() if match else None


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _array_start(text: str, *, after_key: str | None) -> int | None:
    """Offset just after the '[' of the case array, or None when it cannot be found."""
    if after_key is None:
        i = text.find("[")
        return i + 1 if i >= 0 else None
    decoder = json.JSONDecoder()
    # Walk the top-level object key by key so a nested array key is never mistaken.
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


def parse_csv(name: str, text: str, limit: int, delimiter: str) -> Container:
    """A header and records; index columns (``Unnamed: 0``, empty header) are dropped."""
    csv.field_size_limit(max(limit * 4, 131072))  # our own per-row limit applies below
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        header = next(reader)
    except StopIteration as exc:
        raise TestSetError(f"{name}: empty file (no header row)") from exc
    except csv.Error as exc:
        raise TestSetError(f"{name}: line 1: unreadable CSV header ({exc})") from exc
    if is_result_table(header):
        return _result_table(name, reader, header, limit)
    keep = [i for i, h in enumerate(header) if not is_index_column(h)]
    # Spreadsheet headers vary in case ("Question"); JSON keys do not, and keep theirs.
    columns = [header[i].strip().lower() for i in keep]
    dupes = sorted({c for c in columns if columns.count(c) > 1})
    if dupes:
        raise TestSetError(f"{name}: line 1: duplicate column(s) {', '.join(dupes)}")
    out = Container("csv", [], header=tuple(columns))
    data_index = 0
    previous_end = reader.line_num
    while True:
        try:
            record = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            out.problems.append(Problem(name, previous_end + 1, f"unreadable CSV row ({exc})"))
            break  # the csv module cannot resynchronise inside a broken quote
        line = previous_end + 1
        previous_end = reader.line_num
        if not any(cell.strip() for cell in record):
            continue
        data_index += 1
        size = sum(len(cell.encode("utf-8")) for cell in record)
        if size > limit:
            out.problems.append(Problem(name, line, too_big(size, limit)))
            continue
        if len(record) != len(header):
            reason = f"row has {len(record)} fields, header has {len(header)}"
            out.problems.append(Problem(name, line, reason))
            continue
        value = {columns[j]: record[i] for j, i in enumerate(keep)}
        out.rows.append(Row(line, size, value, data_index, container="csv"))
    if not out.rows and not out.problems:
        raise TestSetError(f"{name}: no data rows after the header")
    return out


def _result_table(name: str, reader: Any, header: list[str], limit: int) -> Container:
    """promptfoo's ``-o out.csv``: each record holds one output per prompt column (its
    header repeats ``Status``, ``Score``... per prompt), so each becomes several rows."""
    out = Container("csv", [])
    previous_end, data_index = reader.line_num, 0
    while True:
        try:
            record = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            out.problems.append(Problem(name, previous_end + 1, f"unreadable CSV row ({exc})"))
            break
        line, previous_end = previous_end + 1, reader.line_num
        if not any(cell.strip() for cell in record):
            continue
        data_index += 1
        size = sum(len(cell.encode("utf-8")) for cell in record)
        if size > limit or len(record) != len(header):
            reason = (
                too_big(size, limit)
                if size > limit
                else f"row has {len(record)} fields, header has {len(header)}"
            )
            out.problems.append(Problem(name, line, reason))
            continue
        for result in table_results(header, record):
            result["testIdx"] = data_index - 1
            out.rows.append(Row(line, size, result, data_index, container="json"))
    if not out.rows and not out.problems:
        raise TestSetError(f"{name}: no data rows after the header")
    return out
