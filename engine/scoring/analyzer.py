"""The response analyzer: accuracy, completeness, attribution, claims and highlights.

One ``ResponseAnalyzer`` scores many samples. ``analyze_batch`` prepares every sample
(spans with offsets, texts to embed), embeds the unique texts of the whole batch in one
call, then scores each sample with numpy only. Markup is masked for embedding but never
removed: the masked copy of a response has the same length as the original, so every
offset found on it is an offset into the original (``response[start:end] == text``).

Bad input follows the spec's error table: an empty response scores 0 everywhere and is
flagged ``empty_response``; an embedder that fails after its retries is replaced by the
keyword embedder (flag ``keyword_fallback``); a response over ``max_response_chars`` is
scored in chunks (``response_truncated``); control characters, HTML, markdown and mixed
scripts are masked (``malformed_text``); a case with neither ground truth nor an expected
answer raises ``AnalysisError`` (the runner records an error row). A case without expected
claims has them derived from its expected answer text (``claims_source = 'derived'``, see
``engine.scoring.derived_claims``); with neither, completeness is null and the flag is
``no_expected_claims``; a case without ground truth gets a null coverage and the flag
``no_ground_truth``. An expected claim is found, contradicted (its closest span fires a
contradiction rule; flag ``contradicted_claim``) or missing. A response that abstains
(refuses, deflects, does not know: ``engine.judges.local.abstention``) is flagged ``abstained``
and scored like an empty one.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.embedders.base import Embedder, EmbedderError, Vectors
from engine.embedders.keyword import KeywordEmbedder
from engine.judges.local.abstention import (
    ABSTENTION_PROTOTYPES,
    Abstention,
    classify,
    prototype_cosines,
    reference_abstains,
)
from engine.models import (
    AnalyzerConfig,
    AttributionRecord,
    ClaimRecord,
    GroundTruthChunk,
    HighlightRecord,
    SampleKey,
    TestCase,
)
from engine.scoring.accuracy import (
    AccuracyResult,
    Lookup,
    claim_adjusted,
    score_accuracy,
)
from engine.scoring.attribution import AttributionResult, score_attribution
from engine.scoring.completeness import (
    MISSING_REQUIRED_FLAG,
    ClaimMatch,
    CompletenessResult,
    counts,
    credited,
    name_tokens,
    score_completeness,
)
from engine.scoring.highlights import HighlightResult, Statement, highlight
from engine.scoring.markup import embedding_text, mask_markup
from engine.scoring.plan import AnalysisError, Plan, plan_sample
from engine.scoring.verified import verified_completeness, verifier_matcher
from engine.verifier.choice import ClaimVerifier

__all__ = ["Analysis", "AnalysisError", "ResponseAnalyzer", "embedding_text", "mask_markup"]

log = logging.getLogger(__name__)

ANALYZER_VERSION = "3"


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Analysis:
    """Everything the analyzer found about one response."""

    sample_id: str
    response: str
    accuracy: AccuracyResult
    completeness: CompletenessResult
    attribution: AttributionResult
    highlights: HighlightResult
    flags: tuple[str, ...]
    threshold: float
    """Claim/highlight threshold used for this sample (the keyword one after a fallback)."""
    embedder: str
    """Embedder that produced the vectors (``keyword:...`` after a fallback)."""
    analysis_id: str
    """Content hash of the inputs (case, response, embedder, threshold, config)."""
    reanalysis_of: str | None = None
    """``analysis_id`` of the analysis this one re-did with new ground truth."""
    abstention: Abstention | None = None
    """Sentence kinds and verdict of the abstention check (None for an empty response)."""

    @property
    def abstained(self) -> bool:
        """The response declines, deflects or says it does not know."""
        return self.abstention is not None and self.abstention.abstained

    @property
    def claims_found(self) -> tuple[ClaimMatch, ...]:
        """Expected claims the response states."""
        return self.completeness.claims_found

    @property
    def claims_missing(self) -> tuple[ClaimMatch, ...]:
        """Expected claims the response does not state."""
        return self.completeness.claims_missing

    @property
    def claims_contradicted(self) -> tuple[ClaimMatch, ...]:
        """Expected claims whose closest span in the response states something else."""
        return self.completeness.claims_contradicted

    @property
    def not_in_ground_truth(self) -> tuple[Statement, ...]:
        """Response sentences that no ground-truth passage supports."""
        return self.highlights.not_in_ground_truth

    @property
    def coverage_percent(self) -> float | None:
        """Share of the response (non-space characters) that matches ground truth."""
        return self.highlights.coverage_percent

    def result_fields(self) -> dict[str, Any]:
        """The ``ResultRecord`` fields this analysis fills."""
        return {
            "accuracy": self.accuracy.score,
            "accuracy_tier": self.accuracy.tier,
            "accuracy_similarity": self.accuracy.seed_score,
            "completeness": self.completeness.score,
            "completeness_tier": self.completeness.tier,
            "attribution": self.attribution.score,
            "attribution_tier": self.attribution.tier,
            "coverage_percent": self.highlights.coverage_percent,
            "abstained": self.abstained,
            "flags": list(self.flags),
        }

    def claim_records(self, key: SampleKey) -> list[ClaimRecord]:
        """One ``claims`` row per expected claim: found, contradicted or missing."""
        return [
            ClaimRecord(
                **key.model_dump(),
                claim_id=m.claim.id,
                claim_text=m.claim.text,
                importance=m.claim.importance,
                found=m.found,
                evidence=m.text,
                similarity=m.similarity,
                response_start=m.start,
                response_end=m.end,
                status=m.status,
                rule=m.rule,
                claims_source=m.source,
                confidence=m.confidence,
            )
            for m in self.completeness.claims
        ]

    def highlight_records(self, key: SampleKey) -> list[HighlightRecord]:
        """One ``highlights`` row per response span, matched or not."""
        return [
            HighlightRecord(
                **key.model_dump(),
                response_start=h.start,
                response_end=h.end,
                chunk_id=h.chunk_id,
                page_url=h.page_url,
                matched_text=h.matched_text,
                similarity=h.similarity,
            )
            for h in self.highlights.highlights
        ]

    def attribution_records(self, key: SampleKey) -> list[AttributionRecord]:
        """One ``attributions`` row per mention."""
        return [
            AttributionRecord(
                **key.model_dump(),
                type=m.type,
                matched_text=m.text,
                response_start=m.start,
                response_end=m.end,
                context=m.context,
            )
            for m in self.attribution.mentions
        ]


# --------------------------------------------------------------------------- analyzer


class ResponseAnalyzer:
    """Scores responses against a test case with one embedder and an ``AnalyzerConfig``;
    with a ``verifier``, the verifier decides which expected claims the response states or
    contradicts and what the highlighter marks (the embedder only ranks the evidence)."""

    def __init__(
        self, embedder: Embedder, config: AnalyzerConfig, verifier: ClaimVerifier | None = None
    ) -> None:
        """Use ``embedder`` (falling back to keywords when it fails), ``config`` and
        ``verifier`` (None: cosine thresholds and contradiction rules decide)."""
        self._embedder = embedder
        self._config = config
        self._fallback = KeywordEmbedder()
        self._verifier = verifier

    @property
    def threshold(self) -> float:
        """The claim threshold in use: the configured one, else the embedder's default."""
        configured = self._config.completeness.similarity_threshold
        return configured if configured is not None else self._embedder.default_threshold

    @property
    def fallback_threshold(self) -> float:
        """The threshold used after a keyword fallback."""
        configured = self._config.completeness.similarity_threshold
        return configured if configured is not None else self._fallback.default_threshold

    @property
    def config(self) -> AnalyzerConfig:
        """The analyzer settings."""
        return self._config

    @property
    def verifier_name(self) -> str:
        """Who decides the claims and highlights: the verifier's name, else ``rules``."""
        return self._verifier.name if self._verifier is not None else "rules"

    def analyze(self, case: TestCase, response: str) -> Analysis:
        """Analyze one response; raises ``AnalysisError`` when the case cannot be scored."""
        result = self.analyze_batch([(case, response)])[0]
        if isinstance(result, AnalysisError):
            raise result
        return result

    def analyze_batch(
        self, items: Sequence[tuple[TestCase, str]]
    ) -> list[Analysis | AnalysisError]:
        """Analyze many responses with one embedding pass over their unique texts; a sample
        that cannot be analyzed yields its ``AnalysisError`` in place."""
        plans: list[Plan | AnalysisError] = []
        texts: set[str] = set()
        for case, response in items:
            try:
                plan = plan_sample(
                    case, response if isinstance(response, str) else "", self._config
                )
            except AnalysisError as exc:
                plans.append(exc)
                continue
            except Exception as exc:  # failures are data: one odd sample never stops a run
                log.exception("could not prepare sample %s", case.id)
                plans.append(AnalysisError(f"could not prepare sample {case.id!r}: {exc!r}"))
                continue
            plans.append(plan)
            texts.update(plan.texts())
        lookup, embedder_name, threshold, fallback = self._embed(sorted(texts))
        out: list[Analysis | AnalysisError] = []
        for entry in plans:
            if isinstance(entry, AnalysisError):
                out.append(entry)
                continue
            try:
                out.append(self._score(entry, lookup, embedder_name, threshold, fallback))
            except Exception as exc:
                log.exception("could not score sample %s", entry.case.id)
                out.append(AnalysisError(f"could not score sample {entry.case.id!r}: {exc!r}"))
        return out

    def reanalyze(
        self, previous: Analysis, case: TestCase, new_ground_truth: Sequence[GroundTruthChunk]
    ) -> Analysis:
        """Analyze ``previous.response`` again with ``new_ground_truth``; the result links
        to ``previous`` through ``reanalysis_of``."""
        updated = case.model_copy(update={"ground_truth": tuple(new_ground_truth)})
        fresh = self.analyze(updated, previous.response)
        return dataclasses.replace(fresh, reanalysis_of=previous.analysis_id)

    def _embed(self, texts: list[str]) -> tuple[Lookup, str, float, bool]:
        if not texts:
            return (
                _lookup(texts, np.zeros((0, 1), np.float32)),
                self._embedder.name,
                self.threshold,
                False,
            )
        try:
            vectors = self._embedder.embed(texts)
            if vectors.shape[0] != len(texts) or not np.isfinite(vectors).all():
                raise EmbedderError(
                    f"embedder returned shape {vectors.shape} for {len(texts)} texts"
                )
            return _lookup(texts, vectors), self._embedder.name, self.threshold, False
        except Exception as exc:  # any embedder failure takes the spec's keyword fallback
            log.warning("embedder %s failed (%s); scoring with keywords", self._embedder.name, exc)
            vectors = self._fallback.embed(texts)
            return _lookup(texts, vectors), self._fallback.name, self.fallback_threshold, True

    def _score(
        self, plan: Plan, lookup: Lookup, embedder: str, threshold: float, fallback: bool
    ) -> Analysis:
        config = self._config
        case = plan.case
        attribution = score_attribution(
            plan.response, case.domain, case.brand_names, config.attribution, config.tiers
        )
        flags = list(plan.flags)
        abstention = None if plan.empty else _abstention(plan, lookup, fallback)
        if fallback and not plan.empty:
            flags.append("keyword_fallback")
        abstained = abstention is not None and abstention.abstained
        expected = abstained and _reference_abstains(plan, lookup, fallback)
        if abstained:
            flags.extend(("abstained", "abstention_expected") if expected else ("abstained",))
        if expected:
            # The reference itself says the answer is not known ("the documents do not
            # say"): declining is the right answer, and it states every claim of such a
            # reference (its claims only say that the answer is not given).
            accuracy = AccuracyResult(100.0, config.tiers.tier(100.0), 1.0, (), plan.reference)
            completeness = credited(plan.claims, plan.response, config, plan.claims_source)
            highlights = HighlightResult((), 0.0 if plan.chunks else None, ())
        elif plan.empty or abstained:
            # No answer scores like the spec's empty response: 0 on every analyzer metric,
            # every claim missing, nothing highlighted. A refusal embeds close to its topic
            # (accuracy 52 "fair" before) and must not read as a partial answer.
            zero = config.tiers.tier(0.0)
            completeness = score_completeness(
                (), plan.claims, lookup, threshold, config, source=plan.claims_source
            )
            accuracy = AccuracyResult(0.0, zero, 0.0, (), plan.reference)
            attribution = attribution.emptied(zero)  # stays null when nothing to attribute
            highlights = HighlightResult((), 0.0 if plan.chunks else None, ())
        else:
            accuracy = score_accuracy(
                plan.accuracy_segments, plan.reference_keys, plan.reference, plan.chunks,
                lookup, config,
            )  # fmt: skip
            mentions = [(m.start, m.end) for m in attribution.mentions]
            if self._verifier is not None:
                completeness = verified_completeness(
                    plan.sentences, plan.claims, lookup, self._verifier, config,
                    question=case.query, response=plan.response, source=plan.claims_source,
                )  # fmt: skip
                matcher = verifier_matcher(plan.chunks, lookup, self._verifier)
            else:
                names = name_tokens([*plan.case.brand_names, plan.case.domain])
                completeness = score_completeness(
                    plan.candidates, plan.claims, lookup, threshold, config, names,
                    source=plan.claims_source, response=plan.response,
                )  # fmt: skip
                matcher = None
            highlights = highlight(
                plan.response, plan.sentences, plan.chunks, lookup, threshold, mentions, matcher
            )
            counted = [m for m in completeness.claims if counts(m.claim)]
            accuracy = claim_adjusted(
                accuracy,
                len(counted),
                sum(m.found for m in counted),
                sum(m.status == "contradicted" for m in counted),
                config,
            )
        if completeness.claims_contradicted:
            flags.append("contradicted_claim")
        if completeness.score is None and completeness.claims:
            flags.append("only_optional_claims")
        if config.completeness.require_all_required and completeness.missing_required:
            flags.append(MISSING_REQUIRED_FLAG)
        return Analysis(
            sample_id=case.id,
            response=plan.response,
            accuracy=accuracy,
            completeness=completeness,
            attribution=attribution,
            highlights=highlights,
            flags=tuple(flags),
            threshold=threshold,
            embedder=embedder,
            analysis_id=_analysis_id(
                case, plan.response, embedder, threshold, config, self.verifier_name
            ),
            abstention=abstention,
        )


def _reference_abstains(plan: Plan, lookup: Lookup, fallback: bool) -> bool:
    """Whether the expected answer itself says the answer is not known, read as the
    response is (its text is embedded already, so the refusal prototypes cost nothing)."""
    if plan.reference != "expected_answer":
        return False
    keys = list(plan.reference_keys)
    if fallback:
        return reference_abstains(keys)
    cosines = prototype_cosines(lookup(keys), lookup(list(ABSTENTION_PROTOTYPES)))
    return reference_abstains(keys, cosines)


def _abstention(plan: Plan, lookup: Lookup, fallback: bool) -> Abstention:
    """Abstention check of a planned response: rules, plus the refusal prototypes unless the
    vectors come from the keyword fallback (word overlap says nothing about refusing)."""
    keys = [sentence.key for sentence, _ in plan.sentences]
    if fallback or not keys:
        return classify(keys)
    return classify(keys, prototype_cosines(lookup(keys), lookup(list(ABSTENTION_PROTOTYPES))))


def _lookup(texts: list[str], vectors: Vectors) -> Lookup:
    index = {text: i for i, text in enumerate(texts)}
    dim = vectors.shape[1]

    def lookup(keys: Sequence[str]) -> Vectors:
        if not keys:
            return np.zeros((0, dim), dtype=np.float32)
        rows: Vectors = vectors[[index[k] for k in keys]]
        return rows

    return lookup


def _analysis_id(
    case: TestCase,
    response: str,
    embedder: str,
    threshold: float,
    config: AnalyzerConfig,
    verifier: str,
) -> str:
    payload = json.dumps(
        {
            "v": ANALYZER_VERSION,
            "verifier": verifier,
            "case": case.model_dump(mode="json"),
            "response": response,
            "embedder": embedder,
            "threshold": threshold,
            "config": config.model_dump(mode="json"),
        },
        sort_keys=True,
        ensure_ascii=True,
    )
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:24]
