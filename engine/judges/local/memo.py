"""A small thread-safe least-recently-used map: what the local judge works out once per
context, claim or answer, read again by each metric."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Memo(Generic[K, V]):
    """A thread-safe map keeping its ``size`` most recently used entries: what the judge
    worked out once per context, claim or answer, read again by each metric."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The entry of ``key`` (now the most recently used), or None."""
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> V:
        """Keep ``value`` (forgetting the least recently used beyond the size); returns it."""
        with self._lock:
            self._entries[key] = value
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
        return value
