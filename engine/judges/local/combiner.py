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
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

WEIGHTS_FILE = Path(__file__).with_name("combiner_weights.json")
CORRECTNESS_WEIGHTS_FILE = Path(__file__).with_name("correctness_weights.json")

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
    "context_units_log",
    "support_any",
    "missing_any",
    "contradiction_any",
    "missing_context",
    "uncovered_context",
)
"""Feature names, in the order of the vectors the local judge computes."""

COMBINER_FEATURES: tuple[str, ...] = (
    "cos_best",
    "coverage_best",
    "coverage_top3",
    "coverage_context",
    "support_any",
    "missing_any",
    "number_in_claim",
    "claim_words_log",
)
"""The features the shipped combiner reads. Chosen over 24 variants (feature sets, training
rows, L2) by cross-validated and leave-one-dataset-out figures: the larger sets fit the
k-folds slightly better and generalised worse to a dataset they had not seen."""


CORRECTNESS_FEATURES: tuple[str, ...] = (
    "cos_answer_reference",
    "cos_answer_question",
    "cos_reference_question",
    "reference_over_question",
    "reference_claims_stated",
    "answer_claims_supported",
    "reference_contradicted",
    "answer_contradicted",
    "length_ratio_log",
)
"""Features of an (answer, reference, question) triple for the correctness combiner.
``reference_over_question`` is cos(answer, reference) - cos(answer, question): an answer
that only echoes the question's premise is not thereby correct (TruthfulQA's incorrect
answers restate misconceptions the questions invite)."""


def vetoed(x: Floats) -> bool:
    """A claim with a number, date, name or part found nowhere in the context cannot be
    supported, whatever the similarities say ("X with Y" where Y is never mentioned)."""
    return bool(
        x[FEATURES.index("missing_context")] > 0 or x[FEATURES.index("uncovered_context")] > 0
    )


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
    space: tuple[str, ...] = FEATURES
    """The full feature vector the judge computes (``FEATURES`` or ``CORRECTNESS_FEATURES``)."""

    @property
    def columns(self) -> list[int]:
        """Positions of this combiner's features in a full :data:`FEATURES` vector."""
        return [self.space.index(name) for name in self.features]

    def probability(self, x: Floats) -> float:
        """P(positive) for one full feature vector (ordered as ``space``)."""
        return float(self.probabilities(x[None, :])[0])

    def probabilities(self, rows: Floats) -> Floats:
        """P(supported) for a matrix of full feature rows."""
        z = ((rows[:, self.columns] - self.mean) / self.scale) @ self.weights + self.bias
        out: Floats = 1.0 / (1.0 + np.exp(-np.clip(z, -30.0, 30.0)))
        return out

    def to_json(self) -> dict[str, object]:
        """The JSON form written by the training script."""
        return {
            "version": self.version,
            "space": "correctness" if self.space == CORRECTNESS_FEATURES else "claim",
            "features": list(self.features),
            "mean": [round(float(v), 6) for v in self.mean],
            "scale": [round(float(v), 6) for v in self.scale],
            "weights": [round(float(v), 6) for v in self.weights],
            "bias": round(self.bias, 6),
            "threshold": round(self.threshold, 4),
        }


def from_json(data: Mapping[str, Any]) -> Combiner:
    """A combiner from its JSON form (parsed JSON: any shape until checked); its features
    must be known ones."""
    features = tuple(str(f) for f in data["features"])
    space = CORRECTNESS_FEATURES if data.get("space") == "correctness" else FEATURES
    unknown = [f for f in features if f not in space]
    if unknown:
        raise ValueError(f"combiner weights use unknown features {unknown}")

    def vector(key: str) -> Floats:
        return np.asarray(data[key], dtype=np.float64)

    return Combiner(
        features=features,
        mean=vector("mean"),
        scale=vector("scale"),
        weights=vector("weights"),
        bias=float(data["bias"]),
        threshold=float(data["threshold"]),
        version=str(data["version"]),
        space=space,
    )


@lru_cache(maxsize=1)
def load_combiner() -> Combiner:
    """The committed claim-support combiner (``combiner_weights.json``)."""
    return from_json(json.loads(WEIGHTS_FILE.read_text(encoding="utf-8")))


@lru_cache(maxsize=1)
def load_correctness() -> Combiner:
    """The committed answer-correctness combiner (``correctness_weights.json``)."""
    return from_json(json.loads(CORRECTNESS_WEIGHTS_FILE.read_text(encoding="utf-8")))


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
