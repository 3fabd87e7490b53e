"""A persistent embedding cache: sqlite3 (stdlib) in WAL mode under a given folder.

Rows are keyed by (embedder name, sha256 of the text); the embedder name carries the
model (``local:all-MiniLM-L6-v2-int8-kernels``, ``openai:text-embedding-3-small``), so vectors of
different models never mix. Vectors are stored as raw float32 bytes, so a cached vector
is bit-identical to the one first computed and a warm run scores exactly like a cold one.

Every batch of misses is committed in one transaction (``engine.cache_db`` says why
sqlite); lookups of ~10^5 keys by primary key take well under a second. Inside one process
a single connection is shared behind a lock (sqlite serialises writers anyway).
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from engine.cache_db import open_cache_db, write_rows
from engine.embedders.base import Embedder, Vectors

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    embedder TEXT NOT NULL,
    text_sha256 BLOB NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (embedder, text_sha256)
) WITHOUT ROWID
"""
_LOOKUP_CHUNK = 500  # well under sqlite's limit on bound parameters


def text_key(text: str) -> bytes:
    """sha256 of the UTF-8 text (surrogates escaped so any Python str hashes)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class CachedEmbedder:
    """Wraps an embedder: de-duplicates texts, embeds only cache misses, stores them."""

    def __init__(self, inner: Embedder, folder: Path, *, write_batch: int = 1024) -> None:
        """Cache ``inner``'s vectors in ``folder/embeddings.sqlite3`` (created if needed)."""
        self._inner = inner
        self._folder = Path(folder)
        self._write_batch = max(1, write_batch)
        self._lock = threading.Lock()
        self._db = self._open()
        self.hits = 0
        """Texts answered from the cache."""
        self.misses = 0
        """Texts the inner embedder had to embed."""

    @property
    def inner(self) -> Embedder:
        """The wrapped embedder."""
        return self._inner

    @property
    def name(self) -> str:
        """The inner embedder's name (the cache does not change the vectors)."""
        return self._inner.name

    @property
    def default_threshold(self) -> float:
        """The inner embedder's threshold."""
        return self._inner.default_threshold

    def _open(self) -> sqlite3.Connection:
        return open_cache_db(self._folder / "embeddings.sqlite3", _SCHEMA, "embeddings")

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._db.close()

    def _lookup(self, keys: list[bytes]) -> dict[bytes, bytes]:
        found: dict[bytes, bytes] = {}
        name = self._inner.name
        with self._lock:
            for i in range(0, len(keys), _LOOKUP_CHUNK):
                chunk = keys[i : i + _LOOKUP_CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    "SELECT text_sha256, vector FROM embeddings "
                    f"WHERE embedder = ? AND text_sha256 IN ({marks})",
                    [name, *chunk],
                ).fetchall()
                found.update(rows)
        return found

    def cached(self, texts: Iterable[str]) -> int:
        """How many of the distinct ``texts`` the cache holds vectors of (none embedded)."""
        return len(self._lookup([text_key(t) for t in set(texts)]))

    def _store(self, keys: list[bytes], vectors: Vectors) -> None:
        name = self._inner.name
        rows = [(name, key, vectors[i].tobytes()) for i, key in enumerate(keys)]
        with self._lock:
            # On failure the vectors are still returned; only the cache write is lost.
            write_rows(self._db, "INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?)", rows)

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Vectors of ``texts``: cached ones read back, misses embedded in batches and stored."""
        unique: dict[str, int] = {}
        for text in texts:
            unique.setdefault(text, len(unique))
        keys = [text_key(t) for t in unique]
        cached = self._lookup(keys)
        dim = len(next(iter(cached.values()))) // 4 if cached else 0
        vectors: list[Vectors | None] = [None] * len(unique)
        missing: list[int] = []
        for index, key in enumerate(keys):
            hit = cached.get(key)
            if hit is not None and len(hit) == dim * 4:
                vectors[index] = np.frombuffer(hit, dtype=np.float32)
            else:
                missing.append(index)
        texts_unique = list(unique)
        for begin in range(0, len(missing), self._write_batch):
            rows = missing[begin : begin + self._write_batch]
            fresh = self._inner.embed([texts_unique[i] for i in rows])
            self._store([keys[i] for i in rows], fresh)
            for j, index in enumerate(rows):
                vectors[index] = fresh[j]
        with self._lock:
            self.hits += len(unique) - len(missing)
            self.misses += len(missing)
        if not unique:
            return np.zeros((0, 0), dtype=np.float32)
        matrix = np.vstack([v for v in vectors if v is not None]).astype(np.float32, copy=False)
        return matrix[[unique[t] for t in texts]]
