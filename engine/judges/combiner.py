"""A small learned combiner: logistic regression over the local judge's evidence features.

The local judge used to decide "supported" with hand-tuned thresholds on a blend of cosine
and word overlap. A logistic regression over a dozen features of the best evidence
(cosines, content-word coverage of the best span, of the top spans and of the whole context,
missing numbers, dates and names, uncovered parts, lengths) does better on held-out public
data. It is trained only on public human-labelled sets and the project's labelled sets by
``tests/bench/train_judge.py`` (numpy Newton iterations, no sklearn); the weights are a small
JSON file next to this module, loaded at run time. Nothing here downloads anything.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

WEIGHTS_FILE = Path(__file__).with_name("combiner_weights.json")

FEATURES: tuple[str, ...] = (
    "cos_best",
    "cos_top3_mean",
    "blend_best",
    "coverage_best",
    "coverage_window",
    "coverage_top3",
    "coverage_context",
    "clean_support",
    "partial",
    "missing_details",
    "uncovered_parts",
    "entity_coverage",
    "number_in_claim",
    "claim_words_log",
    "span_ratio",
)
"""Feature names, in the order of the vectors the local judge computes."""

Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Combiner:
    """Standardise, then a logistic regression: P(the evidence supports the claim)."""

    features: tuple[str, ...]
    mean: Floats
    scale: Floats
    weights: Floats
    bias: float
    threshold: float
    """Probability at or above which the claim is SUPPORTED."""
    version: str
    """Recorded in the local judge's prompt_version."""

    def probability(self, x: Floats) -> float:
        """P(supported) for one feature vector (ordered as ``features``)."""
        z = float(((x - self.mean) / self.scale) @ self.weights + self.bias)
        return float(1.0 / (1.0 + np.exp(-np.clip(z, -30.0, 30.0))))

    def probabilities(self, rows: Floats) -> Floats:
        """P(supported) for a matrix of feature rows."""
        z = ((rows - self.mean) / self.scale) @ self.weights + self.bias
        out: Floats = 1.0 / (1.0 + np.exp(-np.clip(z, -30.0, 30.0)))
        return out

    def to_json(self) -> dict[str, object]:
        """The JSON form written by the training script."""
        return {
            "version": self.version,
            "features": list(self.features),
            "mean": [round(float(v), 6) for v in self.mean],
            "scale": [round(float(v), 6) for v in self.scale],
            "weights": [round(float(v), 6) for v in self.weights],
            "bias": round(self.bias, 6),
            "threshold": round(self.threshold, 4),
        }


def from_json(data: dict[str, object]) -> Combiner:
    """A combiner from its JSON form; the feature list must match :data:`FEATURES`."""
    features = tuple(str(f) for f in data["features"])  # type: ignore[attr-defined]
    if features != FEATURES:
        raise ValueError(f"combiner weights are for features {features}, expected {FEATURES}")

    def vector(key: str) -> Floats:
        return np.asarray(data[key], dtype=np.float64)

    return Combiner(
        features=features,
        mean=vector("mean"),
        scale=vector("scale"),
        weights=vector("weights"),
        bias=float(data["bias"]),  # type: ignore[arg-type]
        threshold=float(data["threshold"]),  # type: ignore[arg-type]
        version=str(data["version"]),
    )


@lru_cache(maxsize=1)
def load_combiner() -> Combiner:
    """The committed combiner (``combiner_weights.json``)."""
    return from_json(json.loads(WEIGHTS_FILE.read_text(encoding="utf-8")))


def fit_logistic(
    x: Floats,
    y: Floats,
    sample_weight: Floats | None = None,
    l2: float = 1.0,
    iterations: int = 50,
) -> tuple[Floats, float, Floats, Floats]:
    """Weighted L2-regularised logistic regression by Newton's method.

    Returns (weights, bias, mean, scale) for standardised features; the bias is not
    penalised. Converges in a few iterations for a dozen features.
    """
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = (x - mean) / scale
    n, d = z.shape
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    design = np.hstack([z, np.ones((n, 1))])
    theta = np.zeros(d + 1)
    penalty = np.full(d + 1, l2)
    penalty[-1] = 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(design @ theta, -30.0, 30.0)))
        gradient = design.T @ (w * (p - y)) + penalty * theta
        hessian = (design * (w * p * (1 - p))[:, None]).T @ design + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hessian, gradient)
        theta -= step
        if float(np.max(np.abs(step))) < 1e-8:
            break
    return theta[:-1], float(theta[-1]), mean, scale
