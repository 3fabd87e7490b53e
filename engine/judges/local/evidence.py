"""The evidence a claim has in a context, as the local judge reads it.

For one claim and a prepared context (its sentences and clauses with their vectors and
content stems), :func:`assess` ranks the context units by a blend of cosine and lexical
coverage, reads the closest ones with the contradiction rules, and returns what it found
(the best clean support, the best contradiction, the best partial match) together with the
feature vector of :mod:`engine.judges.local.combiner`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from engine.embedders.base import Vectors
from engine.judges.base import ClaimVerdict
from engine.judges.local.combiner import CORRECTNESS_FEATURES, FEATURES, Floats
from engine.judges.local.quantities import quantities
from engine.judges.local.rules import (
    content_stems,
    contradiction,
    entities,
    entity_swap,
    lowered,
    missing_details,
    uncovered_parts,
)


@dataclass(frozen=True)
class Unit:
    """A sentence or clause of the context."""

    text: str
    chunk: int
    sentence: int
    """Index into the flattened sentence list."""


@dataclass(frozen=True)
class PreparedContext:
    """Context units with their vectors and stems, built once per context."""

    units: tuple[Unit, ...]
    stems: tuple[frozenset[str], ...]
    sentences: tuple[str, ...]
    text: str

    @cached_property
    def every_stem(self) -> frozenset[str]:
        """The content stems of the whole context (read once per claim)."""
        return frozenset().union(*self.stems)

    def window(self, unit: Unit) -> str:
        """The unit's sentence with its neighbours: where missing details are looked for."""
        lo, hi = max(0, unit.sentence - 1), min(len(self.sentences), unit.sentence + 2)
        return " ".join(self.sentences[lo:hi])


@dataclass(frozen=True)
class Assessment:
    """What the context says about one claim."""

    cosines: Floats
    top: int
    """Unit with the highest blended score."""
    support: tuple[float, int] | None
    """(score, unit) of the best unit that states the claim cleanly."""
    contra: tuple[float, int, str] | None
    """(score, unit, 'rule: detail') of the best unit that fires a contradiction rule."""
    partial: tuple[float, int, list[str]] | None
    """(score, unit, missing parts) of the best unit that states only part of the claim."""
    features: Floats
    """The combiner's feature vector (see ``engine.judges.local.combiner.FEATURES``)."""


def _coverage(claim_stems: set[str], stems: frozenset[str] | set[str]) -> float:
    return len(claim_stems & stems) / len(claim_stems) if claim_stems else 0.0


def assess(
    claim: str,
    cosines: Floats,
    prepared: PreparedContext,
    *,
    support_threshold: float,
    contradiction_threshold: float,
    lexical_weight: float,
) -> Assessment:
    """Rank the context units for ``claim`` (``cosines``: one per unit, -1 for units that
    were not embedded) and read the closest ones with the rules."""
    claim_stems = content_stems(claim)
    coverage = np.array([_coverage(claim_stems, s) for s in prepared.stems], dtype=np.float64)
    # Lexical coverage lifts close wordings; cosine alone carries true paraphrases.
    scores = np.maximum(cosines, (1 - lexical_weight) * cosines + lexical_weight * coverage)
    order = [int(i) for i in np.argsort(-scores, kind="stable")[:6]]
    support: tuple[float, int] | None = None
    contra: tuple[float, int, str] | None = None
    partial: tuple[float, int, list[str]] | None = None
    for i in order:
        score = float(scores[i])
        unit = prepared.units[i]
        if score < contradiction_threshold:
            if contra is None and support is None:
                swap = entity_swap(claim, unit.text, prepared.window(unit), prepared.text)
                if swap is not None:
                    contra = (score, i, f"{swap.rule}: {swap.detail}")
            continue
        hit = contradiction(claim, unit.text, prepared.text)
        if hit is not None:
            if contra is None:
                contra = (score, i, f"{hit.rule}: {hit.detail}")
            continue
        if score < support_threshold:
            continue
        window = prepared.window(unit)
        missing = missing_details(claim, window, prepared.text) + uncovered_parts(claim, window)
        if missing:
            if partial is None:
                partial = (score, i, missing)
            continue
        if support is None:
            support = (score, i)
    top = order[0]
    features = _features(claim, claim_stems, prepared, cosines, coverage, scores, order)
    features[FEATURES.index("clean_support")] = support[0] if support is not None else 0.0
    features[FEATURES.index("partial")] = partial[0] if partial is not None else 0.0
    features[FEATURES.index("support_any")] = 1.0 if support is not None else 0.0
    features[FEATURES.index("contradiction_any")] = 1.0 if contra is not None else 0.0
    return Assessment(cosines, top, support, contra, partial, features)


def _features(
    claim: str,
    claim_stems: set[str],
    prepared: PreparedContext,
    cosines: Floats,
    coverage: Floats,
    scores: Floats,
    order: list[int],
) -> Floats:
    top = order[0]
    unit = prepared.units[top]
    window = prepared.window(unit)
    top3: set[str] = set()
    for i in order[:3]:
        top3 |= prepared.stems[i]
    claim_entities = entities(claim)
    context_lower = lowered(prepared.text)
    claim_words = max(1, len(claim.split()))
    missing = missing_details(claim, window, prepared.text)
    values = {
        "cos_best": float(np.max(cosines)),
        "cos_top3_mean": float(np.mean(np.sort(cosines)[::-1][:3])),
        "blend_best": float(scores[top]),
        "coverage_best": float(coverage[top]),
        "coverage_window": _coverage(claim_stems, content_stems(window)),
        "coverage_top3": _coverage(claim_stems, top3),
        "coverage_context": _coverage(claim_stems, prepared.every_stem),
        "clean_support": 0.0,
        "partial": 0.0,
        "missing_details": min(3, len(missing)) / 3,
        "uncovered_parts": min(3, len(uncovered_parts(claim, window))) / 3,
        "entity_coverage": (
            sum(e in context_lower for e in claim_entities) / len(claim_entities)
            if claim_entities
            else 1.0
        ),
        "number_in_claim": 1.0 if quantities(claim) else 0.0,
        "claim_words_log": math.log1p(claim_words),
        "span_ratio": min(4.0, len(unit.text.split()) / claim_words),
        "context_units_log": math.log1p(len(prepared.units)),
        "support_any": 0.0,
        "missing_any": 1.0 if missing else 0.0,
        "contradiction_any": 0.0,
        # Against the whole context: a number, name or part of the claim found nowhere in it.
        "missing_context": min(3, len(missing_details(claim, prepared.text, prepared.text))) / 3,
        "uncovered_context": min(3, len(uncovered_parts(claim, prepared.text))) / 3,
    }
    return np.array([values[name] for name in FEATURES], dtype=np.float64)


def correctness_features(
    vectors: Vectors,
    answer: str,
    reference: str,
    judged: Sequence[tuple[ClaimVerdict, float]],
    back: Sequence[tuple[ClaimVerdict, float]],
) -> Floats:
    """Features of an answer against its reference (``CORRECTNESS_FEATURES`` order).

    ``vectors`` are the question, answer and reference embeddings; ``judged`` the reference
    claims verified against the answer and ``back`` the answer's claims verified against
    the reference, each as (verdict, probability of support).
    """
    q, a, r = (np.asarray(v, dtype=np.float64) for v in vectors[:3])
    cos_ar, cos_aq = float(a @ r), float(a @ q)

    def mean(values: Sequence[tuple[ClaimVerdict, float]]) -> float:
        return float(np.mean([p for _, p in values])) if values else 0.0

    def contradicted(values: Sequence[tuple[ClaimVerdict, float]]) -> float:
        return float(any(v.verdict == "CONTRADICTED" for v, _ in values))

    values = {
        "cos_answer_reference": cos_ar,
        "cos_answer_question": cos_aq,
        "cos_reference_question": float(r @ q),
        "reference_over_question": cos_ar - cos_aq,
        "reference_claims_stated": mean(judged),
        "answer_claims_supported": mean(back),
        "reference_contradicted": contradicted(judged),
        "answer_contradicted": contradicted(back),
        "length_ratio_log": math.log1p(len(answer.split())) - math.log1p(len(reference.split())),
    }
    return np.array([values[name] for name in CORRECTNESS_FEATURES], dtype=np.float64)
