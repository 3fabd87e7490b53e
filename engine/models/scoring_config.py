"""How a run scores what it reads: the analyzer's settings (accuracy, completeness,
attribution), the tiers every 0-100 metric falls in, and the RAG metrics' weights. Parts of
``RunConfig`` (``engine.models.config``), in a module of their own because the run's
settings are long enough."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from engine.models.base import Frozen, Tier


class TierThresholds(Frozen):
    """Lower bounds (0-100) of the score tiers; below ``fair`` is ``poor``."""

    excellent: float = 85.0
    """Scores at or above this are excellent."""
    good: float = 70.0
    """Scores at or above this (and below excellent) are good."""
    fair: float = 50.0
    """Scores at or above this (and below good) are fair."""

    @field_validator("excellent", "good", "fair")
    @classmethod
    def _in_range(cls, bound: float) -> float:
        if not 0.0 <= bound <= 100.0:  # also refuses NaN, which every comparison fails
            raise ValueError("tier thresholds must lie in 0..100")
        return bound

    @model_validator(mode="after")
    def _descending(self) -> TierThresholds:
        # Out of order, a tier is empty or swallows the one above it (excellent 60 under
        # good 70 made every score from 60 up excellent and none good), without a word.
        if not self.excellent > self.good > self.fair:
            raise ValueError(
                f"tier bounds must descend, excellent > good > fair; got excellent "
                f"{self.excellent:g}, good {self.good:g}, fair {self.fair:g}"
            )
        return self

    def tier(self, score: float) -> Tier:
        """The tier of a 0-100 score."""
        if score >= self.excellent:
            return "excellent"
        if score >= self.good:
            return "good"
        if score >= self.fair:
            return "fair"
        return "poor"


class AccuracyConfig(Frozen):
    """How accuracy compares the response with the expected answer."""

    chunking: Literal["none", "sentences", "paragraphs"] = "none"
    """Split the response before comparing: not at all, by sentence or by paragraph."""
    aggregation: Literal["max", "mean"] = "max"
    """How chunk similarities combine into one score."""


class CompletenessConfig(Frozen):
    """How expected claims are searched in the response."""

    similarity_threshold: float | None = None
    """Cosine at or above which a claim counts as found. ``None`` takes the embedder's
    calibrated default (0.75 for OpenAI-style embedders, as the spec says)."""
    require_all_required: bool = False
    """When true, a response missing any required claim is flagged as failing."""
    require_shared_word: bool = True
    """A span states a claim only if it also shares a content word with it (brand and domain
    names aside): sentences about one product embed close together, and cosine alone
    counted unrelated claims as found (demo data: precision 0.79 without, 0.94 with)."""
    derive_claims: bool = True
    """When a case has an expected answer text and no claims, cut the text into atomic
    claims (``claims_source = 'derived'``) so completeness is measured for every case."""
    check_contradictions: bool = True
    """Read the best span of a found claim with the contradiction rules (numbers, units,
    dates, negation, names, antonyms): a span that states something else makes the claim
    ``contradicted``, not found."""


class AttributionConfig(Frozen):
    """Weights of the attribution score."""

    url_weight: float = 100.0
    """Points for citing a URL of the domain (full or partial path)."""
    domain_weight: float = 75.0
    """Points for naming the domain (with or without www., any case)."""
    brand_weight: float = 50.0
    """Points for naming a brand of the domain."""
    multi_mention_bonus: float = 10.0
    """Points added for each mention after the first."""
    max_score: float = 100.0
    """Cap of the attribution score."""


class AnalyzerConfig(Frozen):
    """Settings of the response analyzer, stored with every run (spec defaults)."""

    accuracy: AccuracyConfig = AccuracyConfig()
    """Accuracy settings."""
    completeness: CompletenessConfig = CompletenessConfig()
    """Completeness settings."""
    attribution: AttributionConfig = AttributionConfig()
    """Attribution settings."""
    tiers: TierThresholds = TierThresholds()
    """Tier thresholds applied to every 0-100 metric."""
    max_response_chars: int = 20_000
    """Longer responses are scored in chunks and flagged ``response_truncated``."""
    require_reference: bool = True
    """A case with neither ground truth nor an expected answer is an error row (the spec's
    error table). False: the analyzer leaves such a case's metrics null and flags it
    ``no_reference`` (production traces, scored by ``monitor`` or from a trace file, have
    no reference by nature; the judge still scores faithfulness and relevance)."""


class RagWeights(Frozen):
    """Weights of the RAG overall score (white paper defaults): finite and at least 0 (a
    negative weight left every overall score null without a word)."""

    correctness: float = Field(default=0.4, ge=0.0, allow_inf_nan=False)
    """Weight of correctness."""
    faithfulness: float = Field(default=0.2, ge=0.0, allow_inf_nan=False)
    """Weight of faithfulness."""
    precision: float = Field(default=0.2, ge=0.0, allow_inf_nan=False)
    """Weight of context precision."""
    recall: float = Field(default=0.2, ge=0.0, allow_inf_nan=False)
    """Weight of context recall."""
    relevance: float = Field(default=0.0, ge=0.0, allow_inf_nan=False)
    """Weight of answer relevance."""
