"""Planning a sample for the analyzer: its spans, claims and the texts to embed.

Everything here is pure text work (no vectors): the analyzer plans every sample of a
batch, embeds the union of their texts once, then scores each plan with numpy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from engine.judges.local.abstention import ABSTENTION_PROTOTYPES
from engine.models import AnalyzerConfig, ClaimsSource, ExpectedClaim, GroundTruthChunk, TestCase
from engine.scoring.accuracy import ChunkUnits, Segment
from engine.scoring.derived_claims import derive_claims
from engine.scoring.markup import embedding_text, mask_markup
from engine.text import Span, candidate_spans, split_clauses, split_paragraphs, split_sentences


class AnalysisError(Exception):
    """A sample cannot be analyzed (for example: no ground truth and no expected answer)."""


@dataclass(frozen=True)
class Plan:
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
    claims_source: ClaimsSource = "given"

    def texts(self) -> set[str]:
        """Every text this sample needs a vector for."""
        if self.empty:
            return set()
        out = set(self.reference_keys) | set(ABSTENTION_PROTOTYPES)
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


def expected_claims(
    case: TestCase, config: AnalyzerConfig
) -> tuple[tuple[tuple[ExpectedClaim, str], ...], ClaimsSource]:
    """The case's claims with their embedding texts; derived from the expected answer's
    text when the case has none (and ``derive_claims`` is on). ``evalhouse inspect`` calls
    this too, so what it promises is what the run scores."""
    given, source = case.expected_answer.claims, "given"
    if not given and config.completeness.derive_claims and case.expected_answer.text.strip():
        given, source = derive_claims(case.expected_answer.text), "derived"
    claims = tuple(
        (claim, key) for claim in given if (key := embedding_text(mask_markup(claim.text)[0]))
    )
    return claims, "derived" if source == "derived" else "given"


def has_reference(case: TestCase) -> bool:
    """Whether the case gives the analyzer anything to compare a response with."""
    expected = case.expected_answer
    return bool(case.ground_truth or expected.text.strip() or expected.claims)


def plan_sample(case: TestCase, response: str, config: AnalyzerConfig) -> Plan:
    expected_text = embedding_text(mask_markup(case.expected_answer.text)[0])
    claims, claims_source = expected_claims(case, config)
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
        return Plan(case, response, ("empty_response", *flags), True, (), reference_keys,
                     reference, (), (), claims, chunks, claims_source)  # fmt: skip
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
    return Plan(
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
        claims_source,
    )


def _content_bounds(masked: str) -> tuple[int, int]:
    """Offsets of the first and one past the last non-space character."""
    start, end = 0, len(masked)
    while start < end and masked[start].isspace():
        start += 1
    while end > start and masked[end - 1].isspace():
        end -= 1
    return start, end
