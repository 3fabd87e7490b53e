"""One run's embeddings, shared: every text goes to the embedder once.

The analyzer, the local judge and the embedding graders of a run all read vectors through
one ``EmbeddingStore``. It keeps each text's vector by text, sends only texts it has not
seen to the wrapped embedder (the on-disk cache, then the model), one call per request
with every missing text in it, so the model gets batches as large as its callers gather
(the analyzer and the local judge each ask once per sample batch).

Why one lock around the whole request: two scorers asking for the same text at the same
time must not both embed it, and the model already uses every core for one batch, so
embedding two batches side by side would not be faster.

The store is bounded (least recently used texts go first): a run over very many samples
then re-reads an evicted text from the on-disk cache rather than the model.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from engine.embedders.base import Embedder, EmbedderError, Vectors

DEFAULT_CAPACITY = 30_000
"""Texts kept (MiniLM: 384 float32 = 1.5 KB a vector, ~60 MB with the texts)."""


class EmbeddingStore:
    """An ``Embedder`` that remembers every vector it returned (by text) within a run."""

    def __init__(self, inner: Embedder, *, capacity: int = DEFAULT_CAPACITY) -> None:
        """Serve vectors of ``inner``, keeping the last ``capacity`` texts."""
        self._inner = inner
        self._capacity = max(1, capacity)
        self._vectors: OrderedDict[str, Vectors] = OrderedDict()
        self._lock = threading.Lock()
        self._dim = 0
        self.embedded = 0
        """Texts sent to the wrapped embedder."""
        self.calls = 0
        """Calls made to the wrapped embedder."""

    @property
    def inner(self) -> Embedder:
        """The wrapped embedder."""
        return self._inner

    @property
    def name(self) -> str:
        """The wrapped embedder's name (the store does not change the vectors)."""
        return self._inner.name

    @property
    def default_threshold(self) -> float:
        """The wrapped embedder's threshold."""
        return self._inner.default_threshold

    def __contains__(self, text: object) -> bool:
        with self._lock:
            return text in self._vectors

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Vectors of ``texts`` (one row each); texts not seen yet are embedded in one call.
        Raises EmbedderError when the wrapped embedder fails or returns a wrong shape."""
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
            if missing:
                fresh = self._inner.embed(missing)
                if fresh.ndim != 2 or fresh.shape[0] != len(missing):
                    raise EmbedderError(
                        f"embedder {self._inner.name} returned shape {fresh.shape} "
                        f"for {len(missing)} texts"
                    )
                self.calls += 1
                self.embedded += len(missing)
                self._dim = fresh.shape[1]
                for text, vector in zip(missing, fresh, strict=True):
                    self._vectors[text] = vector
            rows = []
            for text in texts:
                rows.append(self._vectors[text])
                self._vectors.move_to_end(text)
            # Evict only after the rows are read: one request larger than the capacity
            # still gets all its vectors.
            while len(self._vectors) > self._capacity:
                self._vectors.popitem(last=False)
        if not rows:
            return np.zeros((0, self._dim), dtype=np.float32)
        return np.asarray(np.stack(rows), dtype=np.float32)
