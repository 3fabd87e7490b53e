"""What every command shares about ending: the exit codes, the refusal a person can act on,
and the one way a command talks to a person (standard error; standard output is for data)."""

from __future__ import annotations

import sys

from engine.errors import printable

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_CANCELLED = 130
"""Ctrl-C: the run saved what it scored and can be resumed."""


class UsageError(Exception):
    """Bad input: printed without a traceback, exit code 2."""


def err(text: str) -> None:
    """One line for a person, on standard error, at once; control characters from values
    it quotes (paths, column names, server answers) escaped, never sent to the terminal."""
    print(printable(text), file=sys.stderr, flush=True)


def reason(exc: OSError) -> str:
    """What the operating system said, without the errno noise."""
    return exc.strerror or str(exc)


def short(text: str, limit: int = 80) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 3] + "..."
