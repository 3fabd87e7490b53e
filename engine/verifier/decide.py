"""Sentence-level decisions: a claim against the few evidence windows that bear on it.

A cross-encoder reads one short window well and a whole document badly (in the SummaC study
the same NLI model goes from 47.9 to 79.0 AUROC by this change alone). So the evidence is
split into sentences, ranked by relevance to the claim (the embedder's cosine, or word
overlap), and the verifier reads the ``TOP_SENTENCES`` best sentences alone plus the window of
up to ``WINDOW`` consecutive sentences around the best one (a claim may need two sentences
together: "It was founded in 1998." after "Acme Corp is based in Oslo."). The claim is
supported as strongly as its strongest window supports it and contradicted as strongly as its
strongest window contradicts it:

    P(supported) = max_w P_w(S);  P(contradicted) = min(max_w P_w(C), 1 - P(supported))

and the verdict is the most probable of the three. Two verifier calls at most decide every
claim of a sample (``decide_many``): the best sentences alone first, the other windows only
for the claims they leave in doubt.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from engine.judges.local.quantities import number_rule
from engine.judges.local.rules import content_stems
from engine.verifier.choice import ClaimVerifier
from engine.verifier.evidence import PassageTerms

TOP_SENTENCES = 2
"""Evidence sentences read alone per claim."""

WINDOW = 3
"""Sentences in the window around the most relevant one (1 before, 1 after)."""

SHORT_ANSWER_WORDS = 25
"""An answer of at most this many words is read together with its question: "Canada and
Peru." states "The Zephyr X2 is sold in Canada and Peru." only after "Where is the Zephyr X2
sold?"."""

SURE_SUPPORT = 0.9
"""Support of the best sentence alone at which a claim needs no other window."""

Label = Literal["supported", "contradicted", "not_supported"]


def question_prefix(question: str, answer: str) -> str:
    """The text read before each window of ``answer``: its question when the answer is short."""
    return question.strip() if len(answer.split()) <= SHORT_ANSWER_WORDS else ""


@dataclass(frozen=True)
class Decision:
    """The verifier's decision on one claim."""

    supported: float
    contradicted: float
    not_supported: float
    """Probabilities of the three outcomes; they sum to 1."""
    evidence: str
    """The window that decided (the supporting or contradicting one, else the most relevant)."""
    indices: tuple[int, ...]
    """Its evidence sentences, in document order; empty without evidence."""
    rule: str = "verifier"
    """What made a contradicted verdict: the model, or ``number`` where the number guard
    moved the window's support to contradicted (a reader sees why)."""

    @property
    def verdict(self) -> Label:
        """The most probable outcome."""
        probs = (self.supported, self.contradicted, self.not_supported)
        return ("supported", "contradicted", "not_supported")[int(np.argmax(probs))]

    @property
    def confidence(self) -> float:
        """The probability that the claim is supported, or is not, as the verdict says:
        P(supported) for a supported verdict, 1 - P(supported) for the others. Scores count
        supported claims only, so this is the certainty a score rests on (what routes a
        sample to review); contradicted vs not stated is read from the probabilities."""
        return self.supported if self.verdict == "supported" else 1.0 - self.supported


NO_EVIDENCE = Decision(0.0, 0.0, 1.0, "", ())


def windows(
    order: Sequence[int],
    n: int,
    top: int = TOP_SENTENCES,
    width: int = WINDOW,
    *,
    one: bool = False,
) -> list[tuple[int, ...]]:
    """The sentence sets to read, each in document order: the ``top`` first of ``order``
    alone, the ``width`` consecutive sentences around ``order[0]`` (clipped to ``n``), and the
    ``width`` most relevant sentences together (facts spread over a document). Unique.
    ``one``: only the last (a verifier paid per pair)."""
    if not order or n <= 0:
        return []
    if one:
        return [tuple(sorted(order[:width]))]
    out: list[tuple[int, ...]] = [(i,) for i in order[:top]]
    best = order[0]
    start = max(0, min(best - (width - 1) // 2, n - width))
    out.append(tuple(range(start, min(n, start + width))))
    out.append(tuple(sorted(order[:width])))
    return [w for w in dict.fromkeys(out) if w]


def rank(claim: str, sentences: Sequence[str], cosines: npt.ArrayLike | None) -> list[int]:
    """Sentence indices, most relevant first. Relevance is the share of the claim's words a
    sentence holds (IDF-weighted), plus the embedder's cosine when given: words find the
    sentence that names the claim's entities and numbers, the cosine the one that says it in
    other words. Ties keep document order."""
    return rank_many([claim], sentences, [cosines])[0]


def rank_many(
    claims: Sequence[str],
    sentences: Sequence[str],
    cosines: Sequence[npt.ArrayLike | None],
) -> list[list[int]]:
    """``rank`` of each claim (``cosines[i]`` for ``claims[i]``) over the same sentences,
    which are tokenised once for all of them."""
    terms = PassageTerms(sentences)
    orders: list[list[int]] = []
    for claim, row in zip(claims, cosines, strict=True):
        score = np.asarray(terms.relevance(claim), dtype=np.float64)
        if row is not None:
            score = score + np.asarray(row, dtype=np.float64)
        orders.append([int(i) for i in np.argsort(-score, kind="stable")])
    return orders


def guarded(
    probs: npt.NDArray[np.float64], evidence: str, claim: str
) -> tuple[npt.NDArray[np.float64], str]:
    """One window's probabilities after the guards the held-out sets show help
    (docs/verifier.md):

    * a number the window states differently (4.2 vs 2.4 million; two- vs five-year) makes
      the claim not supported there: word pieces of a swapped number read almost alike to
      the model, so its support goes to contradicted;
    * a window that shares no content word with the claim cannot contradict it: an
      unrelated sentence is "not stated", never "contradicted" (caption-style NLI data
      teaches the model otherwise).

    The second value names what decides a contradiction there: ``number`` or ``verifier``.
    """
    s, c, n = (float(x) for x in probs)
    rule = "verifier"
    differs, shares = _guard_facts(claim, evidence)
    if s > 0 and differs:
        s, c, rule = 0.0, c + s, "number"
    if c > 0 and not shares:
        c, n = 0.0, n + c
    return np.asarray((s, c, n)), rule


GUARD_MEMO = 4096
"""(claim, window) pairs whose guard facts are kept: the analyzer and the local judge read
the same claims against the same windows, and a window's facts do not depend on the
model's probabilities."""


@functools.lru_cache(maxsize=GUARD_MEMO)
def _guard_facts(claim: str, evidence: str) -> tuple[bool, bool]:
    """Whether ``evidence`` states a number of ``claim`` differently, and whether the two
    share a content word."""
    differs = number_rule(claim, evidence) is not None
    return differs, bool(content_stems(claim) & content_stems(evidence))


def decide_many(
    verifier: ClaimVerifier,
    claims: Sequence[str],
    sentences: Sequence[str],
    orders: Sequence[Sequence[int]],
    prefix: str = "",
    *,
    guards: bool = True,
) -> list[Decision]:
    """Decide every claim against its windows of ``sentences``: at most two verifier calls.

    ``orders[i]`` ranks the sentences for ``claims[i]`` (``rank``). ``prefix`` (a question) is
    read before every window, so a short answer is read with what it answers. ``guards``
    applies ``guarded`` to each window (off: the model alone, for measuring them).

    The first call reads each claim's most relevant sentence alone; a claim it supports with
    at least ``SURE_SUPPORT`` is decided there (more windows could only raise its support,
    and its contradiction is already capped below 1 - ``SURE_SUPPORT``: the verdict cannot
    change). The second call reads the other windows of the rest.
    """

    def text_of(window: tuple[int, ...]) -> str:
        text = " ".join(sentences[i] for i in window)
        return f"{prefix} {text}".strip() if prefix else text

    def read(pairs: list[tuple[str, str]]) -> tuple[npt.NDArray[np.float64], list[str]]:
        probs = verifier.predict(pairs) if pairs else np.zeros((0, 3))
        if not guards:
            return probs, ["verifier"] * len(pairs)
        checked = [guarded(p, ev, claim) for p, (ev, claim) in zip(probs, pairs, strict=True)]
        return np.asarray([p for p, _ in checked]).reshape(-1, 3), [r for _, r in checked]

    plans = [windows(order, len(sentences), one=verifier.pays_per_pair) for order in orders]
    first = [i for i, spans in enumerate(plans) if spans]
    p1, r1 = read([(text_of(plans[i][0]), claims[i]) for i in first])
    read_probs: dict[int, list[npt.NDArray[np.float64]]] = {}
    read_rules: dict[int, list[str]] = {}
    for i, row, rule in zip(first, p1, r1, strict=True):
        read_probs[i], read_rules[i] = [row], [rule]
    rest = [i for i in first if read_probs[i][0][0] < SURE_SUPPORT and len(plans[i]) > 1]
    more = [(i, w) for i in rest for w in plans[i][1:]]
    p2, r2 = read([(text_of(w), claims[i]) for i, w in more])
    for (i, _), row, rule in zip(more, p2, r2, strict=True):
        read_probs[i].append(row)
        read_rules[i].append(rule)
    for i in first:
        plans[i] = plans[i][: len(read_probs[i])]
    probs = np.asarray([row for i in first for row in read_probs[i]]).reshape(-1, 3)
    rules = [rule for i in first for rule in read_rules[i]]
    out: list[Decision] = []
    k = 0
    for spans in plans:
        if not spans:
            out.append(NO_EVIDENCE)
            continue
        p = probs[k : k + len(spans)]
        rule = rules[k + int(np.argmax(p[:, 1]))]
        k += len(spans)
        s_at, c_at = int(np.argmax(p[:, 0])), int(np.argmax(p[:, 1]))
        supported = float(p[s_at, 0])
        contradicted = min(float(p[c_at, 1]), 1.0 - supported)
        not_supported = max(0.0, 1.0 - supported - contradicted)
        at = s_at if supported >= contradicted and supported >= not_supported else c_at
        if not_supported > max(supported, contradicted):
            at = 0  # the most relevant window, for the reader
        chosen = spans[at]
        out.append(
            Decision(
                round(supported, 6),
                round(contradicted, 6),
                round(not_supported, 6),
                " ".join(sentences[i] for i in chosen),
                chosen,
                rule,
            )
        )
    return out
