"""What every command shares about ending: the exit codes, the refusal a person can act on,
and the one way a command talks to a person (standard error; standard output is for data)."""

from __future__ import annotations

import contextlib
import sys

from engine.errors import printable

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_UNAVAILABLE = 3
"""The warehouse or catalog cannot be read (missing, locked, unreadable, a server down):
an outage, not a mistake, so CI can retry or page someone instead of blaming the change."""
EXIT_CRASHED = 70
"""An unexpected error (a bug, or the machine refused a resource): ``EX_SOFTWARE`` of
sysexits, never 1, which a scheduled ``monitor`` uses for "an alert is firing"."""
EXIT_CANCELLED = 130
"""Ctrl-C: the run saved what it scored and can be resumed."""
EXIT_BROKEN_PIPE = 141
"""The reader of standard output went away (``evalhouse sql ... | head``): what a shell
reports for a command the pipe's signal stopped, whatever the output format."""


class UsageError(Exception):
    """Bad input: printed without a traceback, exit code 2."""


OUT_CHUNK = 1 << 16
"""Characters written to standard output per write (see ``out``)."""


def out(text: str) -> None:
    """Data to standard output, in pieces: a reader that goes away mid-way then surfaces as
    ``BrokenPipeError`` on the next piece, whatever the format (one write of megabytes
    could end half-written without a word)."""
    for start in range(0, len(text), OUT_CHUNK):
        sys.stdout.write(text[start : start + OUT_CHUNK])
        sys.stdout.flush()


def broken_pipe() -> int:
    """Stop writing to a standard output nobody reads, quietly: point it at the null device
    so the interpreter's last flush cannot fail again, and say nothing (as ``cat`` or
    ``grep`` say nothing when ``head`` stops reading)."""
    import os

    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return EXIT_BROKEN_PIPE


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
