"""A disk cache of judge responses: the same prompt to the same model is paid for once.

Keyed by provider, model, prompt version, sha256 of the prompt and temperature. Only
successful, parsed responses are stored (never an error); API keys are not part of the key
or the value. One JSON file per entry, written atomically, so concurrent runs can share it.

Entries are written by one background thread: creating a file costs a millisecond or more
on a busy disk, and ``put`` is called on the event loop once per judge call, where that
wait would hold up every call in flight. An entry not yet on disk is already served by
``get`` (of any cache of the process); ``flush`` (called when a judge closes, and at exit)
waits until every entry is written.
"""

from __future__ import annotations

import atexit
import hashlib
import itertools
import json
import logging
import os
import queue
import threading
from pathlib import Path
from typing import Any

log = logging.getLogger("engine.judges.cache")


def cache_key(
    provider: str, model: str, prompt_version: str, prompt: str, temperature: float
) -> str:
    """The cache key (hex sha256) of one judge request."""
    prompt_hash = hashlib.sha256(prompt.encode("utf-8")).hexdigest()
    material = json.dumps(
        {
            "provider": provider,
            "model": model,
            "prompt_version": prompt_version,
            "prompt_sha256": prompt_hash,
            "temperature": temperature,
        },
        sort_keys=True,
    )
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


class _Writer:
    """The one thread writing cache entries, and the entries it has yet to write."""

    def __init__(self) -> None:
        self.pending: dict[Path, dict[str, Any]] = {}
        self.lock = threading.Lock()
        self.queue: queue.Queue[Path] = queue.Queue()
        self.thread: threading.Thread | None = None

    def submit(self, path: Path, value: dict[str, Any]) -> None:
        with self.lock:
            self.pending[path] = value
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="judge-cache", daemon=True)
                self.thread.start()
                atexit.register(self.flush)
        self.queue.put(path)

    def _run(self) -> None:
        while True:
            path = self.queue.get()
            with self.lock:
                value = self.pending.get(path)
            try:
                if value is not None:
                    _write(path, value)
            except OSError as exc:  # a cache that cannot be written only costs calls
                log.warning("judge cache: cannot write %s: %s", path, exc)
            finally:
                # The same entry put twice is queued twice, and the first turn wrote and
                # dropped it: the second finds nothing (deleting it again killed this
                # thread, and every flush after waited forever).
                with self.lock:
                    if value is not None and self.pending.get(path) is value:
                        del self.pending[path]
                self.queue.task_done()

    def flush(self) -> None:
        if self.thread is not None:
            self.queue.join()


_WRITER = _Writer()


_names = itertools.count()


def _open_temporary(tmp: Path) -> int:
    # Not O_EXCL: the name is unique among live processes (pid) and within this one (the
    # one writer thread counts), so a file already there was left by a dead process that
    # had this pid, and is overwritten.
    return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)


def _write(path: Path, value: dict[str, Any]) -> None:
    """Write one entry atomically (a temporary file, then a rename).

    One encode and one ``write`` call: ``json.dump`` to a file object runs the pure-Python
    encoder chunk by chunk, and with ``mkstemp``'s random names and a ``mkdir`` per entry
    this thread held the GIL for 12% of a 128-calls-in-flight run.
    """
    data = json.dumps(value, ensure_ascii=False).encode("utf-8")
    tmp = path.with_name(f".tmp-{os.getpid()}-{next(_names)}.json")
    try:
        fd = _open_temporary(tmp)
    except FileNotFoundError:  # the first entry of its folder
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = _open_temporary(tmp)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


class JudgeCache:
    """Judge responses under ``folder`` (for example ``EVALHOUSE_HOME/cache/judge``)."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        """Where entries live (created on first write)."""

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry, or None (missing or unreadable entries are misses)."""
        path = self._path(key)
        with _WRITER.lock:
            waiting = _WRITER.pending.get(path)
        if waiting is not None:
            return waiting
        try:
            with path.open(encoding="utf-8") as f:
                value = json.load(f)
        except (OSError, json.JSONDecodeError):
            return None
        return value if isinstance(value, dict) else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        """Store an entry: served by ``get`` at once, written atomically (a temporary file,
        then a rename) by the background writer."""
        _WRITER.submit(self._path(key), dict(value))

    def flush(self) -> None:
        """Wait until every entry put so far (by any cache of the process) is on disk."""
        _WRITER.flush()
