"""Completeness: which expected claims the response states, searched over response spans."""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from engine.judges.local.quantities import quantities
from engine.judges.local.rules import contradiction, missing_details, uncovered_parts
from engine.models import AnalyzerConfig, ClaimsSource, ClaimStatus, ExpectedClaim, Tier
from engine.scoring.accuracy import Lookup, Segment
from engine.text import Span, split_sentences

CONTRADICTION_MARGIN = 0.08
"""A clean span may trail a contradicting one by this much cosine and still make the claim
found (the same margin the local judge uses between support and contradiction)."""

MISSING_REQUIRED_FLAG = "missing_required_claim"
"""The review flag of a response that misses (or contradicts) a claim of importance
``required`` while the run sets ``require_all_required``."""


def required_claims_pass(passed: bool | None, flags: Iterable[str]) -> bool | None:
    """The sample's pass once ``require_all_required`` is applied: a response flagged for a
    missing required claim does not pass, whatever the judge said (the response analyzer
    seed: "fail if any required claim is missing"); any other keeps the judge's pass. A
    sample no judge scored keeps no pass: a pass rate over the flagged samples alone would
    read 0% (the flag, the Samples list's "failed" filter and ``check
    --require-all-required`` still show it failing)."""
    if passed is None:
        return None
    return False if MISSING_REQUIRED_FLAG in flags else passed


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
    status: ClaimStatus = "missing"
    """found, contradicted (evidence kept, with the rule) or missing."""
    rule: str | None = None
    """The contradiction rule that fired (number, unit, date, negation, entity, antonym)."""
    detail: str | None = None
    """What differs, for people: ``claim says 39.9%, evidence says 19.9%``."""
    source: ClaimsSource = "given"
    """given (from the test set) or derived (cut from the reference answer)."""
    confidence: float | None = None
    """The verifier's probability of ``status``; None when rules and cosine decided."""


@dataclass(frozen=True)
class CompletenessResult:
    """Completeness of a response (spec: score, tier, found, missing, totals)."""

    score: float | None
    """Counted claims found / counted claims x 100 (optional claims are reported, not
    counted); None when the case has no counted claims."""
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
        """Claims the response does not state, contradicted ones included."""
        return tuple(c for c in self.claims if not c.found)

    @property
    def claims_contradicted(self) -> tuple[ClaimMatch, ...]:
        """Claims whose closest span in the response states something else."""
        return tuple(c for c in self.claims if c.status == "contradicted")

    @property
    def total(self) -> int:
        """Number of expected claims that count (required and expected ones)."""
        return sum(counts(c.claim) for c in self.claims)

    @property
    def total_found(self) -> int:
        """Number of counted claims found."""
        return sum(counts(c.claim) for c in self.claims_found)


def counts(claim: ExpectedClaim) -> bool:
    """Whether a claim counts in the score: the spec scores required claims; an optional
    claim is looked for and reported, but its absence costs nothing."""
    return claim.importance != "optional"


_WORD = re.compile(r"[A-Za-z0-9$%€£]+(?:[.,][0-9]+)*")
_STOPWORDS = frozenset(
    {"a", "an", "the", "is", "are", "was", "were", "be", "been", "being", "of", "to", "in"}
    | {"on", "at", "for", "with", "and", "or", "by", "from", "as", "it", "its", "this"}
    | {"that", "these", "those", "you", "your", "we", "our", "they", "their", "them", "per"}
    | {"can", "will", "would", "has", "have", "had", "do", "does", "did", "not", "no", "than"}
    | {"into", "up", "out", "all", "any", "each", "also", "there", "here", "which", "who"}
    | {"what", "when", "where", "how", "about", "over", "under", "more", "most", "very"}
    | {"just", "only", "so", "if", "but"}
)


@functools.lru_cache(maxsize=65536)
def content_tokens(text: str, ignore: frozenset[str] = frozenset()) -> frozenset[str]:
    """Content words of ``text``: lower-cased, stop words and ``ignore`` dropped, words
    cut to 5 letters (a crude stem: "founded" ~ "founder"), numbers kept whole."""
    out = set()
    for match in _WORD.finditer(text):
        word = match.group(0).lower()
        if word in _STOPWORDS or word in ignore:
            continue
        out.add(word if any(ch.isdigit() for ch in word) else word[:5])
    return frozenset(out)


def name_tokens(names: Iterable[str]) -> frozenset[str]:
    """Lower-cased words of brand names and domains, which say nothing about a claim."""
    return frozenset(w.lower() for name in names for w in _WORD.findall(name.replace(".", " ")))


def score_completeness(
    candidates: Sequence[Segment],
    claims: Sequence[tuple[ExpectedClaim, str]],
    lookup: Lookup,
    threshold: float,
    config: AnalyzerConfig,
    names: frozenset[str] = frozenset(),
    source: ClaimsSource = "given",
    response: str = "",
) -> CompletenessResult:
    """Search each ``(claim, embedding text)`` over the candidate spans; a claim is found
    when its best cosine is at least ``threshold`` and that span does not contradict it.
    No claims gives a null score.

    With ``require_shared_word`` (default), a span can only state a claim if it shares a
    content word with it, brand and domain
    names (``names``) left out: sentences about one product embed close to each other
    ("Acme Vault has AES-256 encryption" vs "Acme Vault comes with a free trial", cosine
    0.62 with the local model), and the shared name alone must not make a claim "found".

    With ``check_contradictions`` (default), the spans at or above the threshold are read
    with the judge's contradiction rules: cosine cannot tell "costs 39.9% EAR" from
    "charges 19.9% EAR" (0.735). A claim whose closest span fires a rule is
    ``contradicted`` unless a clean span that states its numbers comes within
    ``CONTRADICTION_MARGIN``; a contradicted claim keeps its evidence and counts as not found.
    A clean span must also state the claim in full (``response`` given): every number, date
    and name of the claim in its sentence, and a word of each part of a compound claim
    ("X with Y"); a span that states only part of the claim leaves it missing.
    """
    matches: list[ClaimMatch] = []
    if claims and candidates:
        sims = lookup([key for _, key in claims]) @ lookup([c.key for c in candidates]).T
        eligible = np.ones_like(sims, dtype=bool)
        if config.completeness.require_shared_word:
            span_words = [content_tokens(c.text, names) for c in candidates]
            for i, (claim, _) in enumerate(claims):
                words = content_tokens(claim.text, names)
                if words:  # a claim made only of names and stop words is matched by cosine
                    eligible[i] = [bool(words & w) for w in span_words]
        check = config.completeness.check_contradictions
        sentences = split_sentences(response) if response and check else []
        for i, (claim, _) in enumerate(claims):
            gated = np.where(eligible[i], sims[i], -np.inf)
            match = _match_claim(
                claim, gated, sims[i], candidates, threshold, check, response, sentences
            )
            matches.append(dataclasses.replace(match, source=source))
    else:
        matches = [ClaimMatch(claim, False, 0.0, source=source) for claim, _ in claims]
    missing_required = any(not m.found and m.claim.importance == "required" for m in matches)
    counted = [m for m in matches if counts(m.claim)]
    if not counted:
        return CompletenessResult(None, None, tuple(matches), threshold, False)
    found = sum(m.found for m in counted)
    score = round(found / len(counted) * 100.0, 2)
    return CompletenessResult(
        score, config.tiers.tier(score), tuple(matches), threshold, missing_required
    )


def credited(
    claims: Sequence[tuple[ExpectedClaim, str]],
    response: str,
    config: AnalyzerConfig,
    source: ClaimsSource = "given",
) -> CompletenessResult:
    """Every claim found in ``response``: a reference that says the answer is not known is
    stated in full by an answer that declines ("the sources do not say")."""
    matches = [
        ClaimMatch(claim, True, 1.0, 0, len(response), response, "found", source=source)
        for claim, _ in claims
    ]
    counted = [m for m in matches if counts(m.claim)]
    if not counted:
        return CompletenessResult(None, None, tuple(matches), 1.0, False)
    return CompletenessResult(100.0, config.tiers.tier(100.0), tuple(matches), 1.0, False)


def _sentence_of(span: Segment, sentences: Sequence[Span]) -> str:
    """The response sentence that holds ``span`` (the span itself when none does)."""
    for sentence in sentences:
        if sentence.start <= span.start and span.end <= sentence.end:
            return sentence.text
    return span.text


def _match_claim(
    claim: ExpectedClaim,
    gated: np.ndarray,
    sims: np.ndarray,
    candidates: Sequence[Segment],
    threshold: float,
    check: bool,
    response: str = "",
    sentences: Sequence[Span] = (),
) -> ClaimMatch:
    """Found, contradicted or missing for one claim over the candidate spans."""
    order = [int(j) for j in np.argsort(-gated, kind="stable") if float(gated[j]) >= threshold]
    if not order:
        # Report the closest span even when it cannot count, for the reader.
        return ClaimMatch(claim, False, round(float(sims.max()), 4))
    if not check:
        return _hit(claim, candidates[order[0]], float(sims[order[0]]), "found")
    contra: tuple[int, str, str] | None = None
    claim_numbers = quantities(claim.text)
    for j in order[:8]:
        span = candidates[j]
        if contra is not None and float(gated[j]) < float(gated[contra[0]]) - CONTRADICTION_MARGIN:
            break
        hit = contradiction(claim.text, span.text)
        if hit is not None:
            if contra is None:
                contra = (j, hit.rule, hit.detail)
            continue
        if contra is not None and claim_numbers and not quantities(span.text):
            continue  # a clean span that states no number cannot clear a wrong number
        sentence = _sentence_of(span, sentences)
        if missing_details(claim.text, sentence, response) or uncovered_parts(claim.text, sentence):
            continue  # states part of the claim only: a number, date, name or part is absent
        return _hit(claim, span, float(sims[j]), "found")
    if contra is None:  # every close span states only part of the claim
        return ClaimMatch(claim, False, round(float(sims[order[0]]), 4))
    j, rule, detail = contra
    return _hit(claim, candidates[j], float(sims[j]), "contradicted", rule, detail)


def _hit(
    claim: ExpectedClaim,
    span: Segment,
    similarity: float,
    status: ClaimStatus,
    rule: str | None = None,
    detail: str | None = None,
) -> ClaimMatch:
    return ClaimMatch(
        claim,
        status == "found",
        round(similarity, 4),
        span.start,
        span.end,
        span.text,
        status,
        rule,
        detail,
    )
