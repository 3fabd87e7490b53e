"""The child side of a ``python`` grader: import the project's function, call it per sample.

Runs in its own process (``engine.graders.python_grader`` starts it), so a call past its
time limit can be stopped by killing the process, and nothing the function does (a
``sys.exit``, a crash, a changed global) reaches the run. Imports stdlib only, so the
process starts in a fraction of a second.

The function is called with the sample, either as one ``Sample`` argument (``def
score(sample)``) or, when every parameter is named after a sample field, as keywords
(``def score(response, reference)``). It returns a score 0-1 (a number or a bool), a
``(score, reason)`` tuple, or a dict ``{"score": ..., "reason": ...}``; anything else is
that sample's error.
"""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import math
import os
import sys
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

FIELDS = ("query", "response", "reference", "contexts", "metadata")
"""What a python grader is called with, by name."""

Outcome = tuple[str, float, str]
"""("ok", score, reason) or ("error", 0.0, message)."""


@dataclass(frozen=True)
class Sample:
    """One output to grade, as a python grader receives it."""

    query: str
    """The question (the case's input)."""
    response: str
    """The output being graded."""
    reference: str
    """The expected answer's text (empty when the case has none)."""
    contexts: tuple[str, ...] = ()
    """The retrieved passages the answer was given."""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    """The case's metadata."""


def one_line(text: str, limit: int = 300) -> str:
    """``text`` on one line, shortened: a reason is a table cell, not a log."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def load_function(path: str, name: str) -> Callable[..., Any]:
    """Import the module at ``path`` and return its ``name``. Raises ValueError with the
    reason (the import failed, the name is not callable)."""
    module_path = Path(path)
    # Let the grader import its neighbours and the project's own helpers.
    for folder in (module_path.parent, module_path.parent.parent):
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    spec = importlib.util.spec_from_file_location(f"evalhouse_grader_{module_path.stem}", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot import {module_path.name}")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except BaseException as err:  # any failure of the import is the reason
        raise ValueError(f"importing {module_path.name} failed: {_described(err)}") from None
    function: object = getattr(module, name, None)
    if not callable(function):
        raise ValueError(f"{module_path.name}: {name!r} is not a function")
    return function


def by_keywords(function: Callable[..., Any]) -> bool:
    """Whether ``function`` takes sample fields as keywords (every parameter is named after
    one) rather than one ``Sample``."""
    try:
        params = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return False
    named = [p for p in params if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return all(p.name in FIELDS for p in named)
    return bool(named) and all(p.name in FIELDS for p in named)


def _described(err: BaseException) -> str:
    where = ""
    frames = traceback.extract_tb(err.__traceback__)
    if frames:
        last = frames[-1]
        where = f" ({Path(last.filename).name} line {last.lineno})"
    message = str(err)
    return one_line(f"{type(err).__name__}: {message}" if message else type(err).__name__) + where


def _score(value: object) -> float:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if not isinstance(value, int | float):
        raise ValueError("a score must be a number 0-1 or a bool")
    score = float(value)
    if not math.isfinite(score) or not 0.0 <= score <= 1.0:
        raise ValueError(f"the score {value!r} is outside 0-1")
    return score


def _shown(value: object) -> str:
    text = repr(value)
    return f"{type(value).__name__} {one_line(text, 60)}"


def interpret(value: object) -> tuple[float, str]:
    """(score, reason) of what a grader function returned. Raises ValueError saying why
    the value is not a score."""
    if isinstance(value, tuple | list) and len(value) == 2:
        score, reason = value
    elif isinstance(value, Mapping):
        if "score" not in value:
            raise ValueError("the dict has no 'score'")
        score, reason = value["score"], value.get("reason")
    elif isinstance(value, bool | int | float):
        score, reason = value, None
    else:
        raise ValueError(
            "return a score 0-1 (or a bool), a (score, reason) tuple, or a dict with "
            "'score' and 'reason'"
        )
    if reason is not None and not isinstance(reason, str):
        raise ValueError(f"the reason must be a string, not {type(reason).__name__}")
    return _score(score), reason or ""


def call(function: Callable[..., Any], keywords: bool, fields: Mapping[str, Any]) -> Outcome:
    """Call the grader function on one sample; its failures become ("error", 0, why)."""
    sample = Sample(
        query=str(fields.get("query", "")),
        response=str(fields.get("response", "")),
        reference=str(fields.get("reference", "")),
        contexts=tuple(fields.get("contexts", ())),
        metadata=dict(fields.get("metadata", {})),
    )
    try:
        if keywords:
            wanted = inspect.signature(function).parameters
            value = function(**{k: getattr(sample, k) for k in FIELDS if k in wanted})
        else:
            value = function(sample)
        if inspect.isawaitable(value):
            value = asyncio.run(_awaited(value))
    except BaseException as err:  # SystemExit too: the run must go on
        return "error", 0.0, f"raised {_described(err)}"
    try:
        score, reason = interpret(value)
    except ValueError as err:
        return "error", 0.0, one_line(f"returned {_shown(value)}: {err}")
    return "ok", score, one_line(reason, 2000)


async def _awaited(value: Any) -> Any:
    return await value


def serve(conn: Connection, path: str, name: str) -> None:
    """The worker's loop: load the function, answer ("ready", keywords) or ("failed",
    why), then one outcome per sample received, until the pipe closes."""
    # The function's prints must not reach the run's standard output (its last line is
    # the run id): they go to standard error.
    try:
        sys.stdout.flush()
        os.dup2(2, 1)
    except OSError:
        pass
    sys.stdout = sys.stderr
    try:
        function = load_function(path, name)
    except ValueError as err:
        conn.send(("failed", str(err)))
        return
    keywords = by_keywords(function)
    conn.send(("ready", keywords))
    while True:
        try:
            fields = conn.recv()
        except (EOFError, OSError):
            return
        conn.send(call(function, keywords, fields))


def main(argv: list[str]) -> None:
    """``python -m engine.graders.python_worker FD PATH NAME``: serve on the socket FD."""
    fd, path, name = argv
    serve(Connection(int(fd)), path, name)


if __name__ == "__main__":
    main(sys.argv[1:])
