"""The base of every error caused by the user's input (files, flags, configuration).

The CLI prints these as one line without a traceback and exits with code 2; anything
else is a bug and keeps its traceback.
"""

from __future__ import annotations


class InputError(Exception):
    """Bad input a person can fix; the message names the file, field or flag and why."""
