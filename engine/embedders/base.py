"""The embedder seam: anything that turns texts into L2-normalised vectors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]


class EmbedderError(Exception):
    """The embedder failed after its retries; callers may fall back to keywords."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length vectors (one row per text, cosine = dot product)."""

    @property
    def name(self) -> str:
        """Identifier recorded with every run, e.g. ``local:all-MiniLM-L6-v2-int8-kernels``."""
        ...

    @property
    def default_threshold(self) -> float:
        """Claim-matching cosine threshold calibrated for this embedder."""
        ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts``; shape (len(texts), dim), rows L2-normalised. Raises EmbedderError."""
        ...
