"""promptfoo ``file://`` test references: expanded in place into the rows they hold.

``tests: file://cases.csv``, or list items ``- file://more.yaml`` (globs allowed), are
read relative to the config's folder, with the same size limits; rows keep the line
numbers of their own file. ``defaultTest`` vars and asserts are merged into every test.
"""

from __future__ import annotations

from pathlib import Path

from engine.testsets.base import Problem, Row, TestSetError
from engine.testsets.formats.promptfoo import (
    _csv_test,
    default_test,
    file_reference,
    merge_default,
)
from engine.testsets.reading import Container, decode, read_bytes, read_container


def expand_tests(
    container: Container, base: Path, limit: int, max_file_bytes: int, spent: int = 0
) -> None:
    """Replace ``file://`` rows of ``container`` by the tests of the files they name.

    ``max_file_bytes`` is one budget for the whole load (``spent`` bytes of it went to the
    config itself), not a limit per file: a small config that names one large CSV three
    hundred times must not read it three hundred times. A file named again is read once
    and its repeat reported and skipped (its tests would all be duplicates anyway).
    """
    default = default_test(container.document)
    rows: list[Row] = []
    seen: set[Path] = set()
    repeats: dict[Path, int] = {}
    for row in container.rows:
        ref = file_reference(row.value.get("__file__"), base)
        if ref is None:
            rows.append(_with_default(row, row.value, default))
            continue
        targets = sorted(ref.parent.glob(ref.name)) if "*" in ref.name else [ref]
        if not targets:
            container.problems.append(Problem(str(ref), 0, "no file matches this file:// glob"))
        for target in targets:
            if target in seen:
                repeats[target] = repeats.get(target, 0) + 1
                continue
            seen.add(target)
            left = max_file_bytes - spent
            if _size(target) > left:
                raise TestSetError(
                    f"{target}: the files this config names add up to over the "
                    f"{max_file_bytes:,}-byte budget of one test-set load"
                )
            raw = read_bytes(target, str(target), left)
            spent += len(raw)
            inner = read_container(
                str(target), target.suffix.lower(), decode(str(target), raw), limit
            )
            container.problems.extend(inner.problems)
            for sub in inner.rows:
                test = _csv_test(sub.value) if inner.kind == "csv" else sub.value
                rows.append(_with_default(sub, test, default, source=target))
    for target, count in repeats.items():
        reason = f"named {count} more time(s) by file:// references; read once, repeats skipped"
        container.problems.append(Problem(str(target), 0, reason))
    for index, row in enumerate(rows, start=1):
        rows[index - 1] = Row(row.line, row.size, row.value, index, "yaml", row.source)
    container.rows = rows


def _size(path: Path) -> int:
    """Size of ``path`` (0 when it cannot be read: ``read_bytes`` then says why)."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _with_default(
    row: Row, test: dict[str, object], default: dict[str, object], source: Path | None = None
) -> Row:
    merged = merge_default(dict(test), default)
    return Row(row.line, row.size, merged, row.index, "yaml", source or row.source)
