"""The analyzer's decisions made by the claim verifier: expected claims and highlights.

The embedder only ranks candidate evidence (cosine of the analyzer's one-pass lookup); the
verifier reads the best sentences and windows and decides (``engine.verifier.decide``):

* an expected claim is **found** when the response supports it, **contradicted** when the
  response contradicts it, else **missing**; a short response is read after its question;
* a response sentence (else its clauses) is **highlighted** with the ground-truth passage
  that supports it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.models import AnalyzerConfig, ClaimsSource, ExpectedClaim
from engine.scoring.accuracy import ChunkUnits, Lookup, Segment
from engine.scoring.completeness import ClaimMatch, CompletenessResult, counts
from engine.scoring.highlights import Match, Matcher
from engine.verifier.choice import ClaimVerifier
from engine.verifier.decide import Decision, decide_many, question_prefix, rank_many


def _orders(claim_keys: Sequence[str], unit_keys: Sequence[str], lookup: Lookup) -> np.ndarray:
    """(claims x units) cosines."""
    if not claim_keys or not unit_keys:
        return np.zeros((len(claim_keys), len(unit_keys)))
    return np.asarray(lookup(list(claim_keys)) @ lookup(list(unit_keys)).T, dtype=np.float64)


def verified_completeness(
    sentences: Sequence[tuple[Segment, Sequence[Segment]]],
    claims: Sequence[tuple[ExpectedClaim, str]],
    lookup: Lookup,
    verifier: ClaimVerifier,
    config: AnalyzerConfig,
    *,
    question: str,
    response: str,
    source: ClaimsSource = "given",
) -> CompletenessResult:
    """Found / contradicted / missing for each expected claim, decided by ``verifier`` over
    the response's sentences (ranked per claim by the best cosine of the sentence or one of
    its clauses)."""
    threshold = 0.5
    segments = [sentence for sentence, _ in sentences]
    if not claims:
        return CompletenessResult(None, None, (), threshold, False)
    if not segments:
        matches = [ClaimMatch(c, False, 0.0, source=source) for c, _ in claims]
        return _result(matches, config, threshold)
    # a sentence ranks by its best unit: itself or one of its clauses
    keys = [s.key for s in segments]
    owner = list(range(len(segments)))
    for k, (_, clauses) in enumerate(sentences):
        for clause in clauses:
            keys.append(clause.key)
            owner.append(k)
    cos = _orders([key for _, key in claims], keys, lookup)
    per_sentence = np.full((len(claims), len(segments)), -1.0)
    for j, k in enumerate(owner):
        per_sentence[:, k] = np.maximum(per_sentence[:, k], cos[:, j])
    decisions = decide_many(
        verifier,
        [c.text for c, _ in claims],
        keys[: len(segments)],
        rank_many([c.text for c, _ in claims], keys[: len(segments)], list(per_sentence)),
        question_prefix(question, response),
    )
    matches = [
        _claim_match(claim, d, float(per_sentence[i].max()), segments, response, source)
        for i, ((claim, _), d) in enumerate(zip(claims, decisions, strict=True))
    ]
    return _result(matches, config, threshold)


def _claim_match(
    claim: ExpectedClaim,
    d: Decision,
    similarity: float,
    segments: Sequence[Segment],
    response: str,
    source: ClaimsSource,
) -> ClaimMatch:
    verdict = d.verdict
    if verdict == "not_supported":
        return ClaimMatch(
            claim, False, round(similarity, 4), source=source, confidence=round(d.confidence, 4)
        )
    first, last = segments[d.indices[0]], segments[d.indices[-1]]
    detail = (
        f"the answer says otherwise (verifier {d.contradicted:.2f})"
        if verdict == "contradicted"
        else None
    )
    return ClaimMatch(
        claim,
        verdict == "supported",
        round(similarity, 4),
        first.start,
        last.end,
        response[first.start : last.end],
        "found" if verdict == "supported" else "contradicted",
        d.rule if verdict == "contradicted" else None,
        detail,
        source,
        round(d.confidence, 4),
    )


def _result(
    matches: Sequence[ClaimMatch], config: AnalyzerConfig, threshold: float
) -> CompletenessResult:
    missing_required = any(not m.found and m.claim.importance == "required" for m in matches)
    counted = [m for m in matches if counts(m.claim)]
    if not counted:
        return CompletenessResult(None, None, tuple(matches), threshold, False)
    score = round(sum(m.found for m in counted) / len(counted) * 100.0, 2)
    return CompletenessResult(
        score, config.tiers.tier(score), tuple(matches), threshold, missing_required
    )


def verifier_matcher(
    chunks: Sequence[ChunkUnits], lookup: Lookup, verifier: ClaimVerifier
) -> Matcher:
    """Highlights decided by ``verifier``: a segment matches the passage whose sentences
    (ranked by cosine) support it."""
    units: list[str] = []
    texts: list[str] = []
    owner: list[int] = []
    for j, chunk in enumerate(chunks):
        # a passage of several sentences is read by sentence; one of one sentence whole
        rng = range(1, len(chunk.keys)) if len(chunk.keys) > 1 else range(1)
        for u in rng:
            units.append(chunk.keys[u])
            texts.append(chunk.texts[u])
            owner.append(j)

    def match(segments: Sequence[Segment]) -> list[Match]:
        if not segments:
            return []
        cos = _orders([s.key for s in segments], units, lookup)
        decisions = decide_many(
            verifier,
            [s.key for s in segments],
            units,
            rank_many([s.key for s in segments], units, list(cos)),
        )
        out: list[Match] = []
        for row, d in zip(cos, decisions, strict=True):
            similarity = round(float(row.max()), 4) if len(row) else 0.0
            if d.verdict != "supported":
                out.append(Match(None, None, similarity))
                continue
            chosen = d.indices
            out.append(
                Match(chunks[owner[chosen[0]]], " ".join(texts[i] for i in chosen), similarity)
            )
        return out

    return match
