"""The shared vocabulary of the test-set loaders: rows, problems, the loader protocol."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from engine.errors import InputError
from engine.models import TestCase

MAX_ROW_BYTES = 1_000_000
"""Largest row (JSONL line, CSV record or JSON array element) accepted, in bytes."""

MAX_FILE_BYTES = 512 * 1024 * 1024
"""Largest test-set file read; bigger files are refused before a byte is read (the whole
file is held in memory to hash and parse it)."""


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
    """Detected format, ``<loader>-<container>`` (``ragas-csv``, ``promptfoo-yaml``, ...)."""
    sha256: str
    cases: tuple[TestCase, ...]
    problems: tuple[Problem, ...] = ()
    column_map: Mapping[str, str] = field(default_factory=dict)
    """The ``--map`` column renames applied before detection (empty when none)."""
    inferred: str = ""
    """The renames read from column names when no format matched, with each field's
    runner-up (``question -> query (runner-up: prompt)``); empty when none."""
    series: str = ""
    """The series the file itself names (a trace file's service); '' when none. A run
    without ``--series`` takes it."""

    @property
    def name(self) -> str:
        """The file name without its extension (``acme.jsonl`` -> ``acme``)."""
        return self.path.stem


@dataclass(frozen=True)
class Row:
    """One raw row before conversion: where it is, its size, and its keys and values."""

    line: int
    size: int
    value: dict[str, Any]
    index: int = 0
    """1-based position among the data rows (bad rows included), for ``row-N`` ids."""
    container: str = "json"
    """``json`` or ``jsonl`` (values keep their JSON types; the two are told apart because
    a peer may write a list differently in each), ``yaml``, or ``csv`` (every value is
    text)."""
    source: Path | None = None
    """The file the row came from (a promptfoo ``file://`` test file, say)."""


class RowError(ValueError):
    """A row cannot become a test case; the message is the reason shown to the user."""


class FormatLoader(Protocol):
    """One test-set format: recognise its rows by their keys, and convert one row.

    ``detect`` sees the keys of the first row (and the first row itself, for formats told
    apart by value types) and the container (``jsonl``, ``json``, ``csv``, ``yaml``).
    ``load`` turns one row into a ``TestCase`` or raises ``RowError``; it may leave
    ``domain`` empty: the loader fills it for every format the same way.
    """

    name: str
    """Format name without the container (``ragas``, ``deepeval``, ...)."""
    required: tuple[str, ...]
    """Columns a CSV of this format must have (checked once, on the header)."""

    def detect(self, keys: frozenset[str], first: Mapping[str, Any], container: str) -> bool:
        """True when rows with these keys are in this format."""
        ...

    def load(self, row: Row) -> TestCase:
        """The test case of one row; raises ``RowError`` with a reason."""
        ...


def validated(data: Mapping[str, Any]) -> TestCase:
    """``TestCase`` from a dict, with pydantic's errors turned into one ``RowError``."""
    try:
        return TestCase.model_validate(data)
    except ValidationError as exc:
        reasons = []
        for err in exc.errors()[:5]:
            where = ".".join(str(p) for p in err["loc"]) or "case"
            message = str(err["msg"]).removeprefix("Value error, ")
            reasons.append(f"{where}: {message}")
        raise RowError("; ".join(reasons)) from exc
