"""All of a sample's claims verified in one call, to cut judge calls (the faithfulness DDR's
"batching" and the eval-harness write-up's batched judging).

One prompt (``verify_claims``) carries the context once and every claim numbered; the
reply gives each claim its verdict, evidence and the passages that on their own state it.
Those passages are the RAG-precision judgment (does this chunk state one of the answer's
statements), so precision needs no call of its own. Claims share their sample's context
and are judged each on its own, so the write-up's warnings about batching unrelated test
cases (contrast between outputs, position bias) do not apply; long answers are still cut
into calls of at most :data:`CLAIMS_PER_CALL` claims so one bad reply never loses many.

A reply must hold exactly one verdict per claim, numbered as asked, with passage numbers
that exist: anything else is a ``JudgeResponseError`` (the client repairs once), never a
guess.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from engine.judges.base import ClaimVerdict, JudgeResponseError, Usage
from engine.judges.http.replies import normalise_verdict
from engine.models import Verdict

if TYPE_CHECKING:
    from engine.judges.http.prompt import JsonCalls, Prompt

CLAIMS_PER_CALL = 12
"""Most claims verified in one call; a longer answer takes ceil(claims / 12) calls."""

Parsed = list[tuple[Verdict, str, tuple[int, ...]]]


def batch_calls(claims: int) -> int:
    """Calls a batched verification of ``claims`` claims makes (for estimates)."""
    return -(-claims // CLAIMS_PER_CALL) if claims > 0 else 0


def parse_claim_verdicts(claims: int, passages: int) -> Callable[[Any], Parsed]:
    """A validator of ``{"verdicts": [{claim, verdict, evidence, passages}]}`` for
    ``claims`` claims against ``passages`` numbered passages: (verdict, evidence, 0-based
    passage indices) per claim, in claim order."""

    def parse(payload: Any) -> Parsed:
        rows = payload.get("verdicts") if isinstance(payload, dict) else None
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise JudgeResponseError('expected {"verdicts": [{"claim": 1, "verdict": ...}]}')
        if len(rows) != claims:
            raise JudgeResponseError(f"expected {claims} verdicts (one per claim), got {len(rows)}")
        out: dict[int, tuple[Verdict, str, tuple[int, ...]]] = {}
        for position, row in enumerate(rows, start=1):
            number = row.get("claim", position)
            if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= claims:
                raise JudgeResponseError(f"verdict {position}: claim must be 1-{claims}")
            if number in out:
                raise JudgeResponseError(f"claim {number} has two verdicts")
            evidence = row.get("evidence", "")
            out[number] = (
                normalise_verdict(row.get("verdict")),
                evidence if isinstance(evidence, str) else "",
                _passages(row.get("passages", []), passages, number),
            )
        return [out[i] for i in range(1, claims + 1)]

    return parse


def _passages(raw: Any, passages: int, claim: int) -> tuple[int, ...]:
    if not isinstance(raw, list) or not all(
        isinstance(p, int) and not isinstance(p, bool) and 1 <= p <= passages for p in raw
    ):
        raise JudgeResponseError(f"claim {claim}: passages must be a list of numbers 1-{passages}")
    return tuple(sorted({p - 1 for p in raw}))


async def verify_in_batches(
    client: JsonCalls,
    prompt: Prompt,
    claims: Sequence[str],
    numbered_context: str,
    passages: int,
) -> list[ClaimVerdict]:
    """Verdicts of ``claims`` against the numbered context, :data:`CLAIMS_PER_CALL` per
    call (calls of one sample run concurrently). A call's cost is carried by the verdict
    of its first claim, so summing the verdicts' usage counts every call once."""
    groups = [list(claims[i : i + CLAIMS_PER_CALL]) for i in range(0, len(claims), CLAIMS_PER_CALL)]

    async def one(group: list[str]) -> list[ClaimVerdict]:
        rows, usage = await client.complete_json(
            prompt,
            {
                "context": numbered_context,
                "claims": "\n".join(f"{i + 1}. {c}" for i, c in enumerate(group)),
            },
            parse_claim_verdicts(len(group), passages),
        )
        return [
            ClaimVerdict(
                verdict=verdict,
                evidence=evidence,
                passages=cited,
                usage=usage if i == 0 else Usage(),
            )
            for i, (verdict, evidence, cited) in enumerate(rows)
        ]

    results = await asyncio.gather(*(one(g) for g in groups))
    return [verdict for group in results for verdict in group]
