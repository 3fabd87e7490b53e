"""promptfoo ``file://`` references: tests expanded in place, var and prompt files read.

``tests: file://cases.csv``, or list items ``- file://more.yaml`` (globs allowed), are
read relative to the config's folder, with the same size limits; rows keep the line
numbers of their own file. ``defaultTest`` vars and asserts are merged into every test.
A var whose value is ``file://docs/x.md`` gets the file's text, as promptfoo gives it (a
code file, ``.py``/``.js``, is not run: its var is left out); a ``file://`` prompt gives its
text (the prompts of a ``.txt`` separated by ``---``; a chat ``.json`` its last user
message). A file that does not exist is one problem line naming it (and how many tests
name it), never the literal ``file://`` text taken as a context or a question.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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
    budget = _Budget(max_file_bytes, spent)
    missing: dict[Path, list[str]] = {}
    for row in rows:
        _read_var_files(row, base, budget, missing)
    container.problems.extend(_missing_problems(missing, "test(s)"))


_CODE = frozenset({".py", ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts"})
"""Extensions promptfoo runs rather than reads; evalhouse never runs them."""


class _Budget:
    """The bytes one load may still read (the config's ``max_file_bytes`` budget)."""

    def __init__(self, total: int, spent: int) -> None:
        self.total, self.spent = total, spent
        self.read: dict[Path, str] = {}

    def text(self, target: Path) -> str:
        """The file's text, read once per load and charged to the budget."""
        if target not in self.read:
            raw = read_bytes(target, str(target), max(self.total - self.spent, 0))
            self.spent += len(raw)
            self.read[target] = decode(str(target), raw)
        return self.read[target]


def _read_var_files(row: Row, base: Path, budget: _Budget, missing: dict[Path, list[str]]) -> None:
    """Replace ``file://`` var values of one test by the files' text (in place)."""
    variables = row.value.get("vars")
    if not isinstance(variables, dict):
        return
    for key, value in list(variables.items()):
        target = file_reference(value, base)
        if target is None or "*" in target.name:
            continue
        where = f"vars.{key} of the test on line {row.line} of {row.source or 'the config'}"
        if target.suffix.lower() in _CODE or not target.is_file():
            if not target.is_file():
                missing.setdefault(target, []).append(where)
            variables.pop(key)
            continue
        content = budget.text(target)
        if target.suffix.lower() == ".json":
            try:
                variables[key] = json.loads(content)
                continue
            except json.JSONDecodeError:
                pass
        variables[key] = content


def _missing_problems(missing: dict[Path, list[str]], what: str) -> list[Problem]:
    """One problem line per missing file, naming it and the first place that names it."""
    return [
        Problem(
            str(target),
            0,
            f"file:// target does not exist (named by {len(places)} {what}, first "
            f"by {places[0]}); left out",
        )
        for target, places in missing.items()
    ]


def prompt_files(document: Any, base: Path) -> tuple[tuple[str, ...], list[Problem]]:
    """The text of a config's ``file://`` prompts, and one problem per missing file."""
    prompts = document.get("prompts") if isinstance(document, dict) else None
    if isinstance(prompts, str):
        prompts = [prompts]
    texts: list[str] = []
    missing: dict[Path, list[str]] = {}
    for prompt in prompts if isinstance(prompts, list) else ():
        raw = prompt.get("raw") if isinstance(prompt, dict) else prompt
        target = file_reference(raw, base)
        if target is None or target.suffix.lower() in _CODE or "*" in target.name:
            continue
        if not target.is_file():
            missing.setdefault(target, []).append("the config's prompts")
            continue
        content = read_bytes(target, str(target), 4 * 1024 * 1024)
        texts.extend(_prompt_texts(target, decode(str(target), content)))
    return tuple(texts), _missing_problems(missing, "prompt entry(ies)")


def _prompt_texts(target: Path, content: str) -> list[str]:
    """A prompt file's prompts: ``---``-separated text, or a chat JSON's last user turn."""
    if target.suffix.lower() == ".json":
        try:
            messages = json.loads(content)
        except json.JSONDecodeError:
            return [content]
        if isinstance(messages, list):
            users = [
                m.get("content")
                for m in messages
                if isinstance(m, dict) and m.get("role") == "user"
            ]
            return [users[-1]] if users and isinstance(users[-1], str) else []
        return []
    return [part.strip() for part in content.split("\n---\n") if part.strip()]


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
