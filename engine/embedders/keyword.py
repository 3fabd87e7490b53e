"""A lexical embedder: hashed bag of word stems and bigrams, L2-normalised.

It implements the ``Embedder`` Protocol so that every scorer runs unchanged on it. The
analyzer uses it as the spec's "fall back to keyword matching" when the real embedder
still fails after its retries; records scored with it carry the flag ``keyword_fallback``.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from itertools import pairwise

import numpy as np

from engine.embedders.base import Vectors

KEYWORD_THRESHOLD = 0.25
"""Claim-matching threshold of the keyword embedder, calibrated on
``tests/data/claim_matching.jsonl`` like the local model's: 59 of 67 right (88%), the best
plateau being 0.2-0.25 (cosines of shared stems are much lower than those of a neural
model, since a paraphrase shares only a few words)."""

_WORD = re.compile(r"[^\W_]+(?:['’.][^\W_]+)*", re.UNICODE)
# A word list reads better as one string than as a 100-item list literal.
_STOPWORDS = frozenset(
    """a an the and or but if of to in on at by for with from as is are was were be been
    being it its this that these those there their they them we you your our us i he she
    his her do does did doing have has had having can could will would shall should may
    might must not no so than then too very just also into about over under up down out
    what which who whom whose when where why how all any both each few more most other
    some such only own same s t""".split()  # noqa: SIM905
)
_SUFFIXES = ("ations", "ation", "ingly", "ings", "ing", "edly", "ed", "ies", "es", "ly", "s")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A crude suffix-stripping stem (plural, -ing, -ed, -ly, -ation)."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            return base + "y" if suffix == "ies" else base
    return word


def terms(text: str) -> list[str]:
    """Content-word stems of ``text`` followed by bigrams of consecutive content stems."""
    words = [w.lower() for w in _WORD.findall(text)]
    stems = [stem(w) for w in words if w not in _STOPWORDS]
    return stems + [f"{a} {b}" for a, b in pairwise(stems)]


@lru_cache(maxsize=262144)
def _slot(term: str, dim: int) -> tuple[int, float]:
    digest = hashlib.blake2b(term.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    # A hashed sign keeps colliding terms from always adding up (feature hashing).
    return value % dim, 1.0 if (value >> 63) & 1 else -1.0


class KeywordEmbedder:
    """Hashed bag of stems + bigrams (weights 1 + log tf), unit length; deterministic."""

    def __init__(self, dim: int = 4096) -> None:
        """``dim`` is the number of hash buckets."""
        self._dim = dim

    @property
    def name(self) -> str:
        """``keyword:hashed-stems``."""
        return "keyword:hashed-stems"

    @property
    def default_threshold(self) -> float:
        """The calibrated claim-matching threshold (see ``KEYWORD_THRESHOLD``)."""
        return KEYWORD_THRESHOLD

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts``; a text without content words gets the zero vector."""
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for term, count in Counter(terms(text)).items():
                slot, sign = _slot(term, self._dim)
                out[row, slot] += sign * (1.0 + math.log(count))
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return (out / np.where(norms > 0, norms, 1.0)).astype(np.float32)
