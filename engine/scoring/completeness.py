"""Completeness: which expected claims the response states, searched over response spans."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
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
) -> CompletenessResult:
    """Search each ``(claim, embedding text)`` over the candidate spans; a claim is found
    when its best cosine is at least ``threshold``. No claims gives a null score.

    With ``require_shared_word`` (default), a span can only state a claim if it shares a
    content word with it, brand and domain
    names (``names``) left out: sentences about one product embed close to each other
    ("Acme Vault has AES-256 encryption" vs "Acme Vault comes with a free trial", cosine
    0.62 with the local model), and the shared name alone must not make a claim "found".
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
        for i, (claim, _) in enumerate(claims):
            gated = np.where(eligible[i], sims[i], -np.inf)
            j = int(gated.argmax())
            if float(gated[j]) >= threshold:
                span = candidates[j]
                similarity = round(float(sims[i, j]), 4)
                matches.append(ClaimMatch(claim, True, similarity, span.start, span.end, span.text))
            else:
                # Report the closest span even when it cannot count, for the reader.
                matches.append(ClaimMatch(claim, False, round(float(sims[i].max()), 4)))
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
