"""promptfoo ``file://`` test references: expanded in place into the rows they hold.

``tests: file://cases.csv``, or list items ``- file://more.yaml`` (globs allowed), are
read relative to the config's folder, with the same size limits; rows keep the line
numbers of their own file. ``defaultTest`` vars and asserts are merged into every test.
"""

from __future__ import annotations

from pathlib import Path

from engine.testsets.base import Problem, Row
from engine.testsets.formats.promptfoo import (
    _csv_test,
    default_test,
    file_reference,
    merge_default,
)
from engine.testsets.reading import Container, decode, read_bytes, read_container


def expand_tests(container: Container, base: Path, limit: int, max_file_bytes: int) -> None:
    """Replace ``file://`` rows of ``container`` by the tests of the files they name."""
    default = default_test(container.document)
    rows: list[Row] = []
    for row in container.rows:
        ref = file_reference(row.value.get("__file__"), base)
        if ref is None:
            rows.append(_with_default(row, row.value, default))
            continue
        targets = sorted(ref.parent.glob(ref.name)) if "*" in ref.name else [ref]
        if not targets:
            container.problems.append(Problem(str(ref), 0, "no file matches this file:// glob"))
        for target in targets:
            inner = read_container(
                str(target),
                target.suffix.lower(),
                decode(str(target), read_bytes(target, str(target), max_file_bytes)),
                limit,
            )
            container.problems.extend(inner.problems)
            for sub in inner.rows:
                test = _csv_test(sub.value) if inner.kind == "csv" else sub.value
                rows.append(_with_default(sub, test, default, source=target))
    for index, row in enumerate(rows, start=1):
        rows[index - 1] = Row(row.line, row.size, row.value, index, "yaml", row.source)
    container.rows = rows


def _with_default(
    row: Row, test: dict[str, object], default: dict[str, object], source: Path | None = None
) -> Row:
    merged = merge_default(dict(test), default)
    return Row(row.line, row.size, merged, row.index, "yaml", source or row.source)
