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
claims gets a null completeness and the flag ``no_expected_claims``; a case without ground
truth gets a null coverage and the flag ``no_ground_truth``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from engine.embedders.base import Embedder, EmbedderError, Vectors
from engine.embedders.keyword import KeywordEmbedder
from engine.models import (
    AnalyzerConfig,
    AttributionRecord,
    ClaimRecord,
    ExpectedClaim,
    GroundTruthChunk,
    HighlightRecord,
    SampleKey,
    TestCase,
)
from engine.scoring.accuracy import (
    AccuracyResult,
    ChunkUnits,
    Lookup,
    Segment,
    score_accuracy,
)
from engine.scoring.attribution import AttributionResult, score_attribution
from engine.scoring.completeness import (
    ClaimMatch,
    CompletenessResult,
    name_tokens,
    score_completeness,
)
from engine.scoring.highlights import HighlightResult, Statement, highlight
from engine.text import Span, candidate_spans, split_clauses, split_paragraphs, split_sentences

log = logging.getLogger(__name__)

ANALYZER_VERSION = "1"


class AnalysisError(Exception):
    """A sample cannot be analyzed (for example: no ground truth and no expected answer)."""


# --------------------------------------------------------------------------- masking

_CONTROL = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff"
    "\ud800-\udfff]"
)
_HTML_BLOCK = re.compile(
    r"</?(?:p|br|div|li|ul|ol|h[1-6]|tr|table|section|article|blockquote|pre|hr)\b[^<>]{0,500}>",
    re.IGNORECASE,
)
_HTML_TAG = re.compile(
    r"<!--[^>]{0,2000}?-->|</?[a-zA-Z][a-zA-Z0-9-]{0,20}(?:\s[^<>]{0,500})?/?>", re.DOTALL
)
_ENTITY = re.compile(r"&(?:[a-zA-Z]{2,8}|#\d{1,7}|#[xX][0-9a-fA-F]{1,6});")
_MD_LINK = re.compile(r"(!?\[)([^\[\]\n]{0,500})(\]\([^()\s]{0,2000}\))")
_MD_EMPHASIS = re.compile(
    r"(?<![\w*~`])(?:\*{1,3}|_{1,3}|~~)(?=[^\s*_~])|(?<=[^\s*_~])(?:\*{1,3}|_{1,3}|~~)(?![\w*~])"
)
_MD_CODE = re.compile(r"`{1,3}")
_MD_LINE_MARK = re.compile(r"^[ \t]{0,3}(?:#{1,6}|>{1,3})(?=[ \t])", re.MULTILINE)
_MD_RULE = re.compile(r"^[ \t]*(?:[-*_=|:][ \t]*){3,}$", re.MULTILINE)
_MD_TABLE_PIPE = re.compile(r"(?m)^[ \t]*\|.*\|[ \t]*$")
_MIXED_SCRIPT = re.compile(
    r"\b(?=\w*[A-Za-z])(?=\w*[\u0370-\u03ff\u0400-\u04ff])\w+\b"
)  # a Latin word with Greek or Cyrillic letters in it: usually homoglyphs


def mask_markup(text: str) -> tuple[str, bool]:
    """A copy of ``text`` of the same length with control characters, HTML tags and
    entities and markdown markers replaced by spaces (block tags by a newline), and
    whether anything was masked (or mixed scripts seen). Only embedding uses the copy."""
    chars = list(text)
    touched = False

    def blank(start: int, end: int, newline: bool = False) -> None:
        nonlocal touched
        touched = True
        for i in range(start, end):
            chars[i] = " "
        if newline and end > start:
            chars[start] = "\n"

    for match in _CONTROL.finditer(text):
        blank(match.start(), match.end())
    for match in _HTML_BLOCK.finditer(text):
        blank(match.start(), match.end(), newline=True)
    for match in _HTML_TAG.finditer(text):
        blank(match.start(), match.end())
    for match in _ENTITY.finditer(text):
        blank(match.start(), match.end())
    for match in _MD_LINK.finditer(text):
        blank(match.start(1), match.end(1))
        blank(match.start(3), match.end(3))
    for match in _MD_TABLE_PIPE.finditer(text):
        for i in range(match.start(), match.end()):
            if text[i] == "|":
                blank(i, i + 1)
    for pattern in (_MD_EMPHASIS, _MD_CODE, _MD_LINE_MARK, _MD_RULE):
        for match in pattern.finditer(text):
            blank(match.start(), match.end())
    if _MIXED_SCRIPT.search(text):
        touched = True
    return "".join(chars), touched


def embedding_text(masked: str) -> str:
    """What is embedded for a masked slice: whitespace collapsed, ends trimmed."""
    return " ".join(masked.split())


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

    @property
    def claims_found(self) -> tuple[ClaimMatch, ...]:
        """Expected claims the response states."""
        return self.completeness.claims_found

    @property
    def claims_missing(self) -> tuple[ClaimMatch, ...]:
        """Expected claims the response does not state."""
        return self.completeness.claims_missing

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
            "completeness": self.completeness.score,
            "completeness_tier": self.completeness.tier,
            "attribution": self.attribution.score,
            "attribution_tier": self.attribution.tier,
            "coverage_percent": self.highlights.coverage_percent,
            "flags": list(self.flags),
        }

    def claim_records(self, key: SampleKey) -> list[ClaimRecord]:
        """One ``claims`` row per expected claim, found or missing."""
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


# --------------------------------------------------------------------------- planning


@dataclass(frozen=True)
class _Plan:
    """A sample ready to score: its spans and the texts they need embedded."""

    case: TestCase
    response: str
    flags: tuple[str, ...]
    empty: bool
    accuracy_segments: tuple[Segment, ...]
    reference_keys: tuple[str, ...]
    reference: Literal["expected_answer", "claims", "ground_truth"]
    candidates: tuple[Segment, ...]
    sentences: tuple[tuple[Segment, tuple[Segment, ...]], ...]
    claims: tuple[tuple[ExpectedClaim, str], ...]
    chunks: tuple[ChunkUnits, ...]

    def texts(self) -> set[str]:
        """Every text this sample needs a vector for."""
        if self.empty:
            return set()
        out = set(self.reference_keys)
        out.update(s.key for s in self.accuracy_segments)
        out.update(s.key for s in self.candidates)
        for sentence, clauses in self.sentences:
            out.add(sentence.key)
            out.update(c.key for c in clauses)
        out.update(key for _, key in self.claims)
        for chunk in self.chunks:
            out.update(chunk.keys)
        return out


def _segments(response: str, masked: str, spans: Sequence[Span]) -> list[Segment]:
    out: list[Segment] = []
    for span in spans:
        key = embedding_text(masked[span.start : span.end])
        if key:
            out.append(Segment(span.start, span.end, response[span.start : span.end], key))
    return out


def _chunk_units(chunk: GroundTruthChunk) -> ChunkUnits | None:
    masked, _ = mask_markup(chunk.text)
    whole = embedding_text(masked)
    if not whole:
        return None
    keys, texts = [whole], [chunk.text.strip()]
    sentences = _segments(chunk.text, masked, split_sentences(masked))
    if len(sentences) > 1:
        keys.extend(s.key for s in sentences)
        texts.extend(s.text for s in sentences)
    return ChunkUnits(chunk, tuple(keys), tuple(texts))


def _grouped(segments: Sequence[Segment], response: str, masked: str, limit: int) -> list[Segment]:
    """Consecutive sentences joined into pieces of at most ``limit`` characters."""
    groups: list[Segment] = []
    start: int | None = None
    end = 0
    for segment in segments:
        if start is not None and segment.end - start > limit:
            groups.append(
                Segment(start, end, response[start:end], embedding_text(masked[start:end]))
            )
            start = None
        if start is None:
            start = segment.start
        end = segment.end
    if start is not None:
        groups.append(Segment(start, end, response[start:end], embedding_text(masked[start:end])))
    return groups


def _plan(case: TestCase, response: str, config: AnalyzerConfig) -> _Plan:
    expected_text = embedding_text(mask_markup(case.expected_answer.text)[0])
    claims = tuple(
        (claim, key)
        for claim in case.expected_answer.claims
        if (key := embedding_text(mask_markup(claim.text)[0]))
    )
    chunks = tuple(c for c in map(_chunk_units, case.ground_truth) if c is not None)
    if not chunks and not expected_text and not claims:
        raise AnalysisError(
            f"case {case.id!r} has neither ground truth nor an expected answer: "
            "nothing to compare the response with"
        )
    reference: Literal["expected_answer", "claims", "ground_truth"]
    reference_keys: tuple[str, ...]
    if expected_text:
        reference, reference_keys = "expected_answer", (expected_text,)
    elif claims:
        reference, reference_keys = "claims", (" ".join(key for _, key in claims),)
    else:
        reference, reference_keys = "ground_truth", tuple(c.keys[0] for c in chunks)

    flags: list[str] = []
    masked, malformed = mask_markup(response)
    if malformed:
        flags.append("malformed_text")
    if not claims:
        flags.append("no_expected_claims")
    if not chunks:
        flags.append("no_ground_truth")
    if reference == "ground_truth":
        flags.append("accuracy_vs_ground_truth")
    if not embedding_text(masked):
        return _Plan(case, response, ("empty_response", *flags), True, (), reference_keys,
                     reference, (), (), claims, chunks)  # fmt: skip
    too_long = len(response) > config.max_response_chars
    if too_long:
        flags.append("response_truncated")

    sentence_spans = split_sentences(masked)
    sentences = _segments(response, masked, sentence_spans)
    chunking = config.accuracy.chunking
    if chunking == "sentences":
        accuracy_segments = sentences
    elif chunking == "paragraphs":
        accuracy_segments = _segments(response, masked, split_paragraphs(masked))
        if too_long:
            accuracy_segments = _grouped(accuracy_segments, response, masked,
                                         config.max_response_chars)  # fmt: skip
    elif too_long:
        accuracy_segments = _grouped(sentences, response, masked, config.max_response_chars)
    else:
        start, end = _content_bounds(masked)
        accuracy_segments = [
            Segment(start, end, response[start:end], embedding_text(masked[start:end]))
        ]
    sentence_rows = []
    for span in sentence_spans:
        whole = _segments(response, masked, [span])
        if whole:
            clauses = _segments(response, masked, split_clauses(masked, span))
            sentence_rows.append((whole[0], tuple(clauses)))
    return _Plan(
        case,
        response,
        tuple(flags),
        False,
        tuple(accuracy_segments),
        reference_keys,
        reference,
        tuple(_segments(response, masked, candidate_spans(masked))),
        tuple(sentence_rows),
        claims,
        chunks,
    )


def _content_bounds(masked: str) -> tuple[int, int]:
    """Offsets of the first and one past the last non-space character."""
    start, end = 0, len(masked)
    while start < end and masked[start].isspace():
        start += 1
    while end > start and masked[end - 1].isspace():
        end -= 1
    return start, end


# --------------------------------------------------------------------------- analyzer


class ResponseAnalyzer:
    """Scores responses against a test case with one embedder and an ``AnalyzerConfig``."""

    def __init__(self, embedder: Embedder, config: AnalyzerConfig) -> None:
        """Use ``embedder`` (falling back to keywords when it fails) and ``config``."""
        self._embedder = embedder
        self._config = config
        self._fallback = KeywordEmbedder()

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
        plans: list[_Plan | AnalysisError] = []
        texts: set[str] = set()
        for case, response in items:
            try:
                plan = _plan(case, response if isinstance(response, str) else "", self._config)
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
        self, plan: _Plan, lookup: Lookup, embedder: str, threshold: float, fallback: bool
    ) -> Analysis:
        config = self._config
        case = plan.case
        attribution = score_attribution(
            plan.response, case.domain, case.brand_names, config.attribution, config.tiers
        )
        flags = list(plan.flags)
        if plan.empty:
            zero = config.tiers.tier(0.0)
            completeness = score_completeness((), plan.claims, lookup, threshold, config)
            accuracy = AccuracyResult(0.0, zero, 0.0, (), plan.reference)
            attribution = attribution.emptied(zero)  # stays null when nothing to attribute
            highlights = HighlightResult((), 0.0, ())
        else:
            if fallback:
                flags.append("keyword_fallback")
            accuracy = score_accuracy(
                plan.accuracy_segments, plan.reference_keys, plan.reference, plan.chunks,
                lookup, config,
            )  # fmt: skip
            names = name_tokens([*plan.case.brand_names, plan.case.domain])
            completeness = score_completeness(
                plan.candidates, plan.claims, lookup, threshold, config, names
            )
            highlights = highlight(plan.response, plan.sentences, plan.chunks, lookup, threshold)
        if config.completeness.require_all_required and completeness.missing_required:
            flags.append("missing_required_claim")
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
            analysis_id=_analysis_id(case, plan.response, embedder, threshold, config),
        )


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
    case: TestCase, response: str, embedder: str, threshold: float, config: AnalyzerConfig
) -> str:
    payload = json.dumps(
        {
            "v": ANALYZER_VERSION,
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
