"""``semantic-similarity``: cosine of output and expected answer, mapped into [0, 1].

The eval-harness write-up (section "Semantic Similarity (Embedding Cosine Similarity)"
and again under "How Text Embeddings Work") normalises cosine as::

    return (similarity + 1) / 2; // Normalize [-1, 1] to [0, 1]

and passes when that score >= threshold (default 0.8). We keep both, so a file written
for the write-up's harness means the same here. Note what it implies: threshold 0.8 is a
raw cosine of 0.6, which is where DESIGN.md measured the local MiniLM embedder to
separate stated from unstated claims best.
"""

from __future__ import annotations

import asyncio

import numpy as np

from engine.embedders.base import Embedder, EmbedderError
from engine.graders.base import GradeInput, GraderError, GraderResult, SyncGrader, passes
from engine.graders.spec import GraderSpec


def normalise_cosine(cosine: float) -> float:
    """The write-up's mapping of cosine from [-1, 1] to [0, 1]: ``(cosine + 1) / 2``.

    Clamped, because float error can put a cosine of identical texts at 1.0000001.
    """
    return min(1.0, max(0.0, (cosine + 1.0) / 2.0))


class SemanticSimilarityGrader(SyncGrader):
    """Embeds output and expected answer with the injected embedder and compares them."""

    def __init__(self, spec: GraderSpec, embedder: Embedder) -> None:
        super().__init__(spec)
        self._embedder = embedder
        self._threshold = spec.threshold if spec.threshold is not None else 0.8

    def grade_sync(self, sample: GradeInput) -> GraderResult:
        """Score one output. Raises GraderError when the embedder fails."""
        if not sample.expected.strip():
            # The write-up's behaviour for a case without a reference text.
            return GraderResult(
                passed=False, score=0.0, reason="no reference text to compare the output with"
            )
        if not sample.output.strip():
            return GraderResult(passed=False, score=0.0, reason="the output is empty")
        try:
            vectors = self._embedder.embed([sample.output, sample.expected])
        except EmbedderError as err:
            raise GraderError(
                f"semantic-similarity grader {self.id!r}: embedder {self._embedder.name} "
                f"failed: {err}"
            ) from err
        a = vectors[0].astype(np.float64)
        b = vectors[1].astype(np.float64)
        norm = float(np.linalg.norm(a) * np.linalg.norm(b))
        # Embedders promise unit rows; dividing anyway keeps a sloppy one from scoring > 1.
        cosine = float(a @ b) / norm if norm > 0 else 0.0
        score = normalise_cosine(cosine)
        passed = passes(score, self._threshold)
        return GraderResult(
            passed=passed,
            score=score,
            reason=f"cosine {cosine:.3f} -> similarity {score:.3f} "
            f"({'at or above' if passed else 'below'} threshold {self._threshold:g})",
        )

    async def grade(self, sample: GradeInput) -> GraderResult:
        """Score one output off the event loop (embedding is CPU-bound)."""
        return await asyncio.to_thread(self.grade_sync, sample)
