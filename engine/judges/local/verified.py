"""A claim decided by a verifier on the evidence the local judge's embedder found."""

from __future__ import annotations

import numpy as np

from engine.judges.base import ClaimVerdict
from engine.judges.local.evidence import Assessment, PreparedContext
from engine.models import Verdict
from engine.verifier.choice import ClaimVerifier

VERIFIER_UNITS = 3
"""Context units (sentences or clauses) closest to a claim that a verifier reads."""


def verified(
    verifier: ClaimVerifier, claim: str, a: Assessment, prepared: PreparedContext
) -> tuple[ClaimVerdict, float]:
    """The verifier's verdict on ``claim`` against the units closest to it, in context
    order, and its probability that the claim is supported. The verdict's confidence is the
    probability of the class it names."""
    best = [int(i) for i in np.argsort(-a.cosines, kind="stable")[:VERIFIER_UNITS]]
    window = " ".join(prepared.units[i].text for i in sorted(best))
    probs = verifier.predict([(window, claim)])[0]
    kind: Verdict = "NOT_ENOUGH_INFO"
    if probs[0] >= 0.5:
        kind = "SUPPORTED"
    elif probs[1] >= 0.5:
        kind = "CONTRADICTED"
    right = float(probs[{"SUPPORTED": 0, "CONTRADICTED": 1}.get(kind, 2)])
    verdict = ClaimVerdict(
        verdict=kind,
        evidence=window,
        similarity=round(float(a.cosines[best[0]]), 4),
        confidence=round(right, 4),
    )
    return verdict, float(probs[0])
