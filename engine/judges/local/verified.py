"""Claims decided by a verifier on the evidence the local judge's embedder found.

The embedder only ranks: each context sentence scores the best cosine of its units (the
sentence and its clauses) with the claim. The verifier then reads the best sentence and the
window around it (``engine.verifier.decide``) and decides; all the claims of a sample go to
it in one call.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.judges.base import ClaimVerdict
from engine.judges.local.evidence import Assessment, PreparedContext
from engine.models import Verdict
from engine.verifier.choice import ClaimVerifier
from engine.verifier.decide import decide_many, rank_many

VERDICTS: dict[str, Verdict] = {
    "supported": "SUPPORTED",
    "contradicted": "CONTRADICTED",
    "not_supported": "NOT_ENOUGH_INFO",
}


def sentence_cosines(a: Assessment, prepared: PreparedContext) -> np.ndarray:
    """Best cosine of each context sentence's units with the claim (-1 when none embedded)."""
    out = np.full(len(prepared.sentences), -1.0)
    for unit, cosine in zip(prepared.units, a.cosines, strict=True):
        out[unit.sentence] = max(out[unit.sentence], float(cosine))
    return out


def verified_many(
    verifier: ClaimVerifier,
    claims: Sequence[str],
    assessments: Sequence[Assessment],
    prepared: PreparedContext,
    prefix: str = "",
) -> list[tuple[ClaimVerdict, float]]:
    """The verifier's verdict on each claim and its probability that the claim is supported.

    A verdict's confidence is the probability of the class it names; a supported one names
    the context passages its evidence window comes from (what RAG precision counts);
    ``prefix`` (a question) is read before each window.
    """
    chunk_of = {unit.sentence: unit.chunk for unit in prepared.units}
    cosines = [sentence_cosines(a, prepared) for a in assessments]
    orders = rank_many(claims, prepared.sentences, cosines)
    decisions = decide_many(verifier, claims, prepared.sentences, orders, prefix)
    out: list[tuple[ClaimVerdict, float]] = []
    for decision, c in zip(decisions, cosines, strict=True):
        kind = VERDICTS[decision.verdict]
        passages = (
            tuple(sorted({chunk_of[i] for i in decision.indices if i in chunk_of}))
            if kind == "SUPPORTED"
            else ()
        )
        verdict = ClaimVerdict(
            verdict=kind,
            evidence=decision.evidence or "No context to verify",
            similarity=round(float(c.max()), 4) if len(c) else 0.0,
            rule=decision.rule if kind == "CONTRADICTED" else None,
            confidence=round(decision.confidence, 4),
            passages=passages,
        )
        out.append((verdict, decision.supported))
    return out
