"""Reading files a user names (test sets, run configs, grader and candidate files): bounded.

A path may name anything: a FIFO or ``/dev/zero`` never ends, a directory is no file, and a
huge file must be refused before it is read. Parsed documents are bounded too: JSON and
YAML nested deeper than any real test set, or YAML whose aliases expand to billions of
nodes ("billion laughs"), are refused with one line instead of a RecursionError or an
exhausted memory.
"""

from __future__ import annotations

import gc
import json
import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec

from engine.errors import InputError, one_line

MAX_DEPTH = 64
"""Deepest nesting of lists and objects accepted in a row or a config (real files use <10)."""

MAX_NODES = 2_000_000
"""Most values one YAML document may expand to, aliases counted each time they are used."""

MAX_EXPANDED_BYTES = 256 * 1024 * 1024
"""Most characters of text one YAML document may expand to, aliases counted each time they
are used: a 200 KB string reused through anchors 10,000 times is 2 GB once it is copied
into rows, though the file is small and its node count modest."""


MAX_SPEC_BYTES = 1_000_000
"""Largest candidate or grader file read (real ones are a few kilobytes)."""


_INT_DIGITS = sys.get_int_max_str_digits()
"""Python refuses to convert longer integers (a quadratic-time guard); such a value is bad
input, reported like any other."""


_FAST_JSON = msgspec.json.Decoder()
_MISSING = object()


class UserFileError(InputError):
    """A file the user named cannot be read; the message names it and says why."""


def read_user_bytes(path: Path, what: str, limit: int, name: str | None = None) -> bytes:
    """The bytes of ``path`` (a regular file of at most ``limit`` bytes), else
    ``UserFileError`` naming ``name`` (default the path) and ``what`` it was meant to be
    (``test set``, ``run config``).

    The size is checked before reading and the read itself stops at ``limit + 1`` bytes,
    so a file that grows meanwhile, or a device that reports size 0, cannot exhaust memory.
    """
    shown = one_line(name or str(path))
    try:
        # O_NONBLOCK: opening a FIFO without a writer must not hang before the check below.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise UserFileError(f"{shown}: cannot read {what} ({exc.strerror or exc})") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise UserFileError(f"{shown}: cannot read {what}: {kind}")
        if info.st_size > limit:
            raise UserFileError(
                f"{shown}: file is {info.st_size:,} bytes, over the {limit:,}-byte limit of a "
                f"{what}; split it or pass a sample"
            )
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise UserFileError(f"{shown}: cannot read {what} ({exc.strerror or exc})") from exc
    finally:
        os.close(fd)
    if len(data) > limit:
        raise UserFileError(f"{shown}: file grew over the {limit:,}-byte limit of a {what}")
    return data


class TooDeep(json.JSONDecodeError):
    """JSON nested deeper than allowed; a ``JSONDecodeError`` so every caller that refuses
    invalid JSON refuses this the same way."""


def json_loads(text: str, max_depth: int | None = MAX_DEPTH) -> Any:
    """``json.loads`` that raises ``TooDeep`` (never ``RecursionError``) for a document
    nested over ``max_depth`` levels (``None``: only the interpreter's own limit).

    msgspec reads first (a third faster than the standard library on a large document);
    anything it refuses is read again by ``json.loads``, which accepts a few things msgspec
    does not (``NaN``, ``1e400``, lone surrogate escapes) and words every error with its
    line and column. Where msgspec accepts a document, both give the same value (integers
    of any size included)."""
    try:
        value = _FAST_JSON.decode(text)
    except (ValueError, RecursionError):
        value = _MISSING
    if value is not _MISSING:
        if max_depth is not None and depth_over(value, max_depth):
            raise TooDeep(f"nested too deeply (over {max_depth} levels)", text, 0)
        return value
    try:
        value = json.loads(text)
    except RecursionError:
        raise TooDeep(f"nested too deeply (over {MAX_DEPTH} levels)", text, 0) from None
    except json.JSONDecodeError:
        raise
    except ValueError:  # an integer over Python's 4,300-digit conversion limit
        raise json.JSONDecodeError(f"an integer of over {_INT_DIGITS:,} digits", text, 0) from None
    if max_depth is not None and depth_over(value, max_depth):
        raise TooDeep(f"nested too deeply (over {max_depth} levels)", text, 0)
    return value


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a large document is parsed and turned into
    records, back to its previous state after. Parsing allocates millions of lists and
    dicts, none of them cyclic, and each allocation burst makes the collector walk every
    object still alive: 100,000 OTLP spans parse in 0.7 s without it and 3 s with it.
    Memory stays bounded by the file size limits (reference counting frees all but
    cycles)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def depth_over(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether lists and dicts in ``value`` nest deeper than ``limit`` (walked without
    recursion, so the check itself cannot overflow the stack)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _size_over(value: Any, limit: int, max_chars: int = MAX_EXPANDED_BYTES) -> bool:
    """Whether ``value`` has more than ``limit`` values, or more than ``max_chars``
    characters of strings, when every alias is expanded (stops counting at either limit, so
    a cyclic or exponential document costs at most ``limit`` steps)."""
    stack = [value]
    count = 0
    chars = 0
    while stack:
        item = stack.pop()
        count += 1
        if count > limit:
            return True
        if isinstance(item, str):
            chars += len(item)
            if chars > max_chars:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return False


def load_yaml(text: str, name: str) -> Any:
    """``yaml.safe_load`` with nesting and alias expansion bounded; ``UserFileError``
    (with the line when YAML gives one) for anything that is not a sane YAML document."""
    import yaml

    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UserFileError(f"{name}: invalid YAML{where}: {first}") from exc
    except RecursionError as exc:
        raise UserFileError(f"{name}: YAML nested too deeply (over {MAX_DEPTH} levels)") from exc
    except ValueError as exc:  # an integer over Python's 4,300-digit conversion limit
        raise UserFileError(
            f"{name}: invalid YAML: an integer of over {_INT_DIGITS:,} digits"
        ) from exc
    if _size_over(doc, MAX_NODES):
        raise UserFileError(
            f"{name}: YAML expands to over {MAX_NODES:,} values or "
            f"{MAX_EXPANDED_BYTES:,} characters of text (aliases reused many times?)"
        )
    if depth_over(doc):
        raise UserFileError(f"{name}: YAML nested too deeply (over {MAX_DEPTH} levels)")
    return doc


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all: a temporary file beside it, synced,
    then renamed over it (a reader, or a crash, never sees half a file)."""
    import uuid

    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)  # gone after the replace; left only by a failed write
