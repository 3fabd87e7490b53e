"""Claim-level faithfulness (faithfulness DDR): supported claims / claims of the response.

The judge is injected. Claims are extracted once by the caller (or here) and each is checked
against the context; an empty response is vacuously faithful (1.0). An invalid verdict from
the judge (JudgeResponseError) is retried once and then propagates: the runner turns it into
an error row rather than a guessed score.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from engine.judges.base import (
    BatchVerifier,
    ClaimsResult,
    ClaimVerdict,
    ExtractedClaim,
    Judge,
    JudgeResponseError,
    Usage,
)


@dataclass(frozen=True)
class ClaimCheck:
    """One claim of the response and the judge's verdict on it."""

    claim: ExtractedClaim
    verdict: ClaimVerdict


@dataclass(frozen=True)
class FaithfulnessResult:
    """Claim faithfulness of one response."""

    score: float
    """Supported / total in 0-1; 1.0 when the response makes no claims."""
    checks: tuple[ClaimCheck, ...]
    """Every claim with its verdict and evidence, in response order."""
    usage: Usage
    """What extraction and verification cost."""

    @property
    def supported(self) -> int:
        """Claims the context supports."""
        return sum(c.verdict.verdict == "SUPPORTED" for c in self.checks)

    @property
    def contradicted(self) -> int:
        """Claims the context contradicts."""
        return sum(c.verdict.verdict == "CONTRADICTED" for c in self.checks)

    @property
    def not_enough_info(self) -> int:
        """Claims the context neither supports nor contradicts."""
        return sum(c.verdict.verdict == "NOT_ENOUGH_INFO" for c in self.checks)

    @property
    def reasoning(self) -> str:
        """One line for people: counts and the claims that were not supported."""
        if not self.checks:
            return "No claims: vacuously faithful."
        bad = [c for c in self.checks if c.verdict.verdict != "SUPPORTED"]
        text = f"{self.supported} of {len(self.checks)} claims supported"
        if bad:
            text += "; not supported: " + "; ".join(
                f"'{c.claim.text}' ({c.verdict.verdict})" for c in bad[:5]
            )
        return text + "."


def faithfulness_score(verdicts: Sequence[ClaimVerdict]) -> float:
    """Supported / total; 1.0 for no claims (the DDR's vacuous case)."""
    if not verdicts:
        return 1.0
    return sum(v.verdict == "SUPPORTED" for v in verdicts) / len(verdicts)


async def verify_one(judge: Judge, claim: str, context: Sequence[str]) -> ClaimVerdict:
    """``judge.verify_claim`` with one retry on an invalid judge response."""
    try:
        return await judge.verify_claim(claim, context)
    except JudgeResponseError:
        return await judge.verify_claim(claim, context)


def batches(judge: Judge) -> bool:
    """Whether ``judge`` verifies a sample's claims in one call (``BatchVerifier``)."""
    return isinstance(judge, BatchVerifier) and judge.batches_claims


async def verdicts_for(
    judge: Judge, claims: Sequence[str], context: Sequence[str]
) -> list[ClaimVerdict]:
    """A verdict per claim: in one batched call when the judge batches, else one call per
    claim (concurrently; HTTP judges limit their own concurrency). Either way an invalid
    judge response is retried once."""
    if not claims:
        return []
    if batches(judge) and isinstance(judge, BatchVerifier):
        try:
            return await judge.verify_claims(claims, context)
        except JudgeResponseError:
            return await judge.verify_claims(claims, context)
    return list(await asyncio.gather(*(verify_one(judge, c, context) for c in claims)))


async def verify_claims(
    judge: Judge, claims: Sequence[ExtractedClaim], context: Sequence[str]
) -> tuple[ClaimCheck, ...]:
    """Verdicts for every claim (see ``verdicts_for``)."""
    verdicts = await verdicts_for(judge, [c.text for c in claims], context)
    return tuple(ClaimCheck(c, v) for c, v in zip(claims, verdicts, strict=True))


async def claim_faithfulness(
    response: str,
    context: Sequence[str],
    judge: Judge,
    *,
    claims: ClaimsResult | None = None,
) -> FaithfulnessResult:
    """Extract (unless given) and verify the response's claims; score supported / total."""
    if claims is None:
        claims = (
            await judge.extract_claims(response) if response.strip() else ClaimsResult(claims=())
        )
    checks = await verify_claims(judge, claims.claims, context)
    usage = claims.usage
    for check in checks:
        usage = usage + check.verdict.usage
    return FaithfulnessResult(
        score=faithfulness_score([c.verdict for c in checks]), checks=checks, usage=usage
    )
