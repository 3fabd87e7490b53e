"""Writing a file a user names with ``--output``: as a shell redirection would, and whole.

A regular file (or a name not there yet) is written to a temporary file beside it and
renamed over it, so a reader or a crash never sees half of it. Anything else is written
through, never replaced: a symbolic link writes to what it points at, and a named pipe, a
terminal or a device (``/dev/stdout``, ``/dev/null``) gets the bytes as ``> PATH`` would
send them; renaming over them would swap a device node for a regular file (for every
process on the machine, when run as root) or break a link someone keeps. ``-`` is
standard output.
"""

from __future__ import annotations

import os
import stat
import sys
import uuid
from pathlib import Path

from engine.errors import InputError

STDOUT = "-"
"""The ``--output`` value that means standard output."""


class OutputError(InputError):
    """The output cannot be written there (a directory, no permission, disk full...)."""


def is_stdout(path: Path | str | None) -> bool:
    """Whether ``--output`` names standard output (``-``; None: not given)."""
    return path is not None and str(path) == STDOUT


def _replace_whole(path: Path, text: str, mode: int | None) -> None:
    """Temporary file beside ``path``, synced, renamed over it; an existing file's
    permission bits are kept (a report someone made private stays private)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as handle:
            if mode is not None:
                os.fchmod(handle.fileno(), stat.S_IMODE(mode))
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)  # gone after the replace; left only by a failed write


def write_output(path: Path, text: str, *, flag: str = "--output") -> None:
    """Write ``text`` to ``path`` (``-``: standard output): whole by rename for a regular
    file or a new name, through for everything else. ``OutputError`` naming ``flag`` and
    the path when the system refuses."""
    if is_stdout(path):
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        found = None
    except OSError as exc:
        raise OutputError(f"{flag} {path}: {exc.strerror or exc}") from None
    try:
        if found is None or stat.S_ISREG(found.st_mode):
            _replace_whole(path, text, found.st_mode if found is not None else None)
        elif stat.S_ISDIR(found.st_mode):
            raise OutputError(f"{flag} {path}: is a directory")
        else:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
    except OutputError:
        raise
    except OSError as exc:
        raise OutputError(f"{flag} {path}: {exc.strerror or exc}") from None
