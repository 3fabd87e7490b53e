"""Evidence-window selection shared by the verifier's training and its runtime.

The cross-encoder reads at most ``MAX_TOKENS`` word pieces, so long evidence (a web page, a
sales call) is cut down to the few passages most relevant to the claim before it is read.
Training (``training/verifier``) imports these functions, so the window the model learned on is
exactly the window it sees at run time.

Relevance is lexical and cheap: the IDF-weighted share of the claim's content words found in a
passage, with the IDF computed over the passages themselves. The chosen passages are joined in
their original order.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

DEFAULT_K = 4
"""Passages kept per claim."""

DEFAULT_WORD_BUDGET = 110
"""Words of evidence kept (about 140 word pieces; the claim takes the rest of the 192)."""

_WORD = re.compile(r"[a-z0-9]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])|\n+")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "and",
        "or",
        "but",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "it",
        "its",
        "this",
        "that",
        "with",
        "as",
        "by",
        "from",
        "he",
        "she",
        "they",
        "his",
        "her",
        "their",
        "i",
        "you",
        "we",
        "my",
        "your",
        "our",
        "not",
        "no",
        "do",
        "does",
        "did",
        "have",
        "has",
        "had",
        "will",
        "would",
        "can",
        "could",
        "so",
        "if",
        "than",
        "then",
        "there",
        "here",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "all",
        "any",
        "some",
        "just",
        "also",
        "very",
        "about",
        "into",
        "over",
        "more",
        "most",
    ]
)


def words(text: str) -> list[str]:
    """Lower-cased alphanumeric tokens of ``text``."""
    return _WORD.findall(text.lower())


def content_words(text: str) -> list[str]:
    """Tokens of ``text`` without stop words (all tokens when every one is a stop word)."""
    toks = words(text)
    return [w for w in toks if w not in _STOP] or toks


def split_passages(text: str) -> list[str]:
    """Split a document into sentence-sized passages (on line breaks and sentence ends)."""
    parts = (p.strip() for p in _SENTENCE_END.split(text))
    return [p for p in parts if p]


class PassageTerms:
    """The word sets of a list of passages, for ranking them against several claims: each
    passage is tokenised once and each term's document frequency counted once, however
    many claims are read against the same passages (a sample's claims share its context)."""

    def __init__(self, passages: Sequence[str]) -> None:
        self.bags = [set(words(p)) for p in passages]
        self._idf: dict[str, float] = {}

    def _term_idf(self, term: str) -> float:
        idf = self._idf.get(term)
        if idf is None:
            n = len(self.bags)
            idf = math.log(1.0 + n / (1.0 + sum(term in b for b in self.bags)))
            self._idf[term] = idf
        return idf

    def relevance(self, claim: str) -> list[float]:
        """IDF-weighted share of the claim's content words found in each passage."""
        claim_terms = set(content_words(claim))
        if not claim_terms or not self.bags:
            return [0.0 for _ in self.bags]
        # the terms in the set's order, summed in that order as ``relevance`` always did
        weights = [(t, self._term_idf(t)) for t in claim_terms]
        total = sum([w for _, w in weights]) or 1.0
        return [sum([w for t, w in weights if t in b]) / total for b in self.bags]


def relevance(claim: str, passages: Sequence[str]) -> list[float]:
    """IDF-weighted share of the claim's content words found in each passage."""
    return PassageTerms(passages).relevance(claim)


def select_evidence(
    claim: str,
    passages: Sequence[str],
    k: int = DEFAULT_K,
    word_budget: int = DEFAULT_WORD_BUDGET,
) -> str:
    """The evidence window the verifier reads for ``claim``.

    All passages are kept, in order, when they fit in ``word_budget`` words. Otherwise the
    ``k`` most relevant passages (``relevance``; ties keep document order) are taken while they
    fit, a passage that alone exceeds the budget is cut to it, and the chosen ones are joined
    in document order.
    """
    cleaned = [p.strip() for p in passages if p and p.strip()]
    sizes = [len(p.split()) for p in cleaned]
    if sum(sizes) <= word_budget:
        return " ".join(cleaned)
    scores = relevance(claim, cleaned)
    order = sorted(range(len(cleaned)), key=lambda i: (-scores[i], i))
    chosen: dict[int, str] = {}
    used = 0
    for i in order:
        if len(chosen) >= k or used >= word_budget:
            break
        if used + sizes[i] <= word_budget:
            chosen[i] = cleaned[i]
            used += sizes[i]
        elif not chosen:
            chosen[i] = " ".join(cleaned[i].split()[:word_budget])
            used = word_budget
    return " ".join(chosen[i] for i in sorted(chosen))


def evidence_for_document(
    claim: str, document: str, k: int = DEFAULT_K, word_budget: int = DEFAULT_WORD_BUDGET
) -> str:
    """``select_evidence`` over the passages of one document (see ``split_passages``)."""
    return select_evidence(claim, split_passages(document), k=k, word_budget=word_budget)
