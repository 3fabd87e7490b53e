"""The base of every error caused by the user's input (files, flags, configuration).

The CLI prints these as one line without a traceback and exits with code 2; anything
else is a bug and keeps its traceback.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with control characters (escape sequences, carriage returns, NULs) written
    as ``\\x1b``-style escapes, newlines kept: a value echoed from a file name, a column or
    a flag must not clear or rewrite the user's terminal."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", text)


def one_line(value: str) -> str:
    """A value quoted in a message (a path, a column name) with its line breaks written as
    ``\\n``: a file named "a\\nerror: ..." must not add a line to the one-line answer."""
    return value.replace("\r", "\\r").replace("\n", "\\n")


class InputError(Exception):
    """Bad input a person can fix; the message names the file, field or flag and why.

    Its text is :func:`printable`: the values it quotes come from files and flags."""

    def __str__(self) -> str:
        return printable(super().__str__())
