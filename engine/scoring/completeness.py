"""Completeness: which expected claims the response states, searched over response spans."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.models import AnalyzerConfig, ExpectedClaim, Tier
from engine.scoring.accuracy import Lookup, Segment


@dataclass(frozen=True)
class ClaimMatch:
    """One expected claim and the response span that states it best."""

    claim: ExpectedClaim
    found: bool
    similarity: float
    """Best cosine between the claim and a response span (0 when nothing was searched)."""
    start: int | None = None
    """Offsets and text of the evidence; None when the claim is missing."""
    end: int | None = None
    text: str | None = None


@dataclass(frozen=True)
class CompletenessResult:
    """Completeness of a response (spec: score, tier, found, missing, totals)."""

    score: float | None
    """found / total x 100; None when the case has no expected claims."""
    tier: Tier | None
    claims: tuple[ClaimMatch, ...]
    threshold: float
    missing_required: bool
    """True when at least one claim of importance ``required`` is missing."""

    @property
    def claims_found(self) -> tuple[ClaimMatch, ...]:
        """Claims the response states."""
        return tuple(c for c in self.claims if c.found)

    @property
    def claims_missing(self) -> tuple[ClaimMatch, ...]:
        """Claims the response does not state (their importance is on ``claim``)."""
        return tuple(c for c in self.claims if not c.found)

    @property
    def total(self) -> int:
        """Number of expected claims."""
        return len(self.claims)

    @property
    def total_found(self) -> int:
        """Number of claims found."""
        return len(self.claims_found)


def score_completeness(
    candidates: Sequence[Segment],
    claims: Sequence[tuple[ExpectedClaim, str]],
    lookup: Lookup,
    threshold: float,
    config: AnalyzerConfig,
) -> CompletenessResult:
    """Search each ``(claim, embedding text)`` over the candidate spans; a claim is found
    when its best cosine is at least ``threshold``. No claims gives a null score."""
    matches: list[ClaimMatch] = []
    if claims and candidates:
        sims = lookup([key for _, key in claims]) @ lookup([c.key for c in candidates]).T
        best = sims.argmax(axis=1)
        for i, (claim, _) in enumerate(claims):
            j = int(best[i])
            similarity = round(float(sims[i, j]), 4)
            if float(sims[i, j]) >= threshold:
                span = candidates[j]
                matches.append(ClaimMatch(claim, True, similarity, span.start, span.end, span.text))
            else:
                matches.append(ClaimMatch(claim, False, similarity))
    else:
        matches = [ClaimMatch(claim, False, 0.0) for claim, _ in claims]
    missing_required = any(not m.found and m.claim.importance == "required" for m in matches)
    if not matches:
        return CompletenessResult(None, None, (), threshold, False)
    found = int(np.count_nonzero([m.found for m in matches]))
    score = round(found / len(matches) * 100.0, 2)
    return CompletenessResult(
        score, config.tiers.tier(score), tuple(matches), threshold, missing_required
    )
