"""The local judge's decision thresholds."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Thresholds:
    """Decision thresholds of the local judge (on the blended support score)."""

    support: float
    """Score at or above which evidence can support a claim."""
    contradiction: float
    """Score at or above which a firing rule contradicts the claim."""
    margin: float = 0.08
    """Supporting evidence may trail contradicting evidence by at most this much."""
    lexical_weight: float = 0.35
    """Weight of lexical coverage in the blended score (the rest is cosine)."""


LOCAL_THRESHOLDS = Thresholds(support=0.6, contradiction=0.6)
"""Calibrated for local:all-MiniLM-L6-v2-int8 (the float-kernel reading of the model) on the
project's labelled set; the int8-kernel model moves the demo's judge scores by at most 0.04
on their 1-5 scale (``python -m tests.bench.embedder_int8_quality``)."""
