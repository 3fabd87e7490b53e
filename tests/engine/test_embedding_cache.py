"""The persistent embedding cache: de-duplication, misses only, persistence, threads."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from engine.embedders.base import Embedder, Vectors
from engine.embedders.cache import CachedEmbedder


class Counting:
    """Deterministic 8-d vectors from a hash; counts texts and calls."""

    def __init__(self, name: str = "fake:model-a") -> None:
        self._name = name
        self.calls: list[list[str]] = []
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self._name

    @property
    def default_threshold(self) -> float:
        return 0.42

    def embed(self, texts: Sequence[str]) -> Vectors:
        with self._lock:
            self.calls.append(list(texts))
        rows = []
        for text in texts:
            digest = hashlib.sha256((self._name + text).encode("utf-8", "surrogatepass")).digest()[
                :8
            ]
            v = np.frombuffer(digest, dtype=np.uint8).astype(np.float32) - 127.5
            rows.append(v / np.linalg.norm(v))
        return np.array(rows, dtype=np.float32).reshape(len(texts), 8)

    @property
    def texts(self) -> list[str]:
        return [t for call in self.calls for t in call]


def test_dedupes_and_embeds_only_misses(tmp_path: Path) -> None:
    inner = Counting()
    cache = CachedEmbedder(inner, tmp_path)
    assert isinstance(cache, Embedder)
    assert cache.name == "fake:model-a" and cache.default_threshold == 0.42
    first = cache.embed(["a", "b", "a", "c"])
    assert inner.texts == ["a", "b", "c"]
    assert np.array_equal(first[0], first[2])
    second = cache.embed(["c", "d", "a"])
    assert inner.texts == ["a", "b", "c", "d"]
    assert np.array_equal(second[0], first[3]) and np.array_equal(second[2], first[0])
    assert (cache.hits, cache.misses) == (2, 4)


def test_persists_bit_identical_across_instances(tmp_path: Path) -> None:
    texts = [f"sentence number {i}" for i in range(300)] + ["émoji 🙂", "", "\ud800 lone"]
    cold = CachedEmbedder(Counting(), tmp_path).embed(texts)
    inner = Counting()
    warm = CachedEmbedder(inner, tmp_path).embed(texts)
    assert inner.calls == []
    assert np.array_equal(cold, warm)


def test_models_never_mix(tmp_path: Path) -> None:
    a = CachedEmbedder(Counting("fake:model-a"), tmp_path).embed(["same text"])
    inner_b = Counting("fake:model-b")
    b = CachedEmbedder(inner_b, tmp_path).embed(["same text"])
    assert inner_b.texts == ["same text"]
    assert not np.array_equal(a, b)


def test_misses_are_embedded_in_batches(tmp_path: Path) -> None:
    inner = Counting()
    CachedEmbedder(inner, tmp_path, write_batch=100).embed([str(i) for i in range(250)])
    assert [len(c) for c in inner.calls] == [100, 100, 50]


def test_concurrent_writers(tmp_path: Path) -> None:
    inner = Counting()
    cache = CachedEmbedder(inner, tmp_path)
    errors: list[BaseException] = []
    results: dict[int, Vectors] = {}

    def work(n: int) -> None:
        try:
            results[n] = cache.embed(
                [f"shared {i}" for i in range(50)] + [f"own {n} {i}" for i in range(50)]
            )
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for n in range(1, 8):
        assert np.array_equal(results[0][:50], results[n][:50])
    fresh = Counting()
    CachedEmbedder(fresh, tmp_path).embed([f"own {n} {i}" for n in range(8) for i in range(50)])
    assert fresh.calls == []


def test_corrupt_database_is_set_aside(tmp_path: Path) -> None:
    (tmp_path / "embeddings.sqlite3").write_bytes(b"this is not a database" * 100)
    inner = Counting()
    vectors = CachedEmbedder(inner, tmp_path).embed(["x"])
    assert vectors.shape == (1, 8) and inner.texts == ["x"]
    assert list(tmp_path.glob("embeddings.sqlite3.corrupt-*"))


def test_empty_input(tmp_path: Path) -> None:
    inner = Counting()
    assert CachedEmbedder(inner, tmp_path).embed([]).shape[0] == 0
    assert inner.calls == []
