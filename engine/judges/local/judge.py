"""The local judge: deterministic, offline, no LLM.

Claims are the response's sentences and clauses (verbatim spans, offsets kept). A claim is
checked against the context's sentences and clauses by embedding similarity blended with
lexical coverage (share of the claim's content words the evidence states); the contradiction
rules of :mod:`engine.judges.local.rules` then read the closest evidence, because embeddings score
a negated or re-numbered sentence nearly as high as the original.

Verdicts:
- CONTRADICTED: evidence at least the contradiction threshold makes a rule fire and no
  clean evidence comes within the margin;
- SUPPORTED: the learned combiner (:mod:`engine.judges.local.combiner`, a logistic regression over
  cosines, coverage and missing-detail features, trained on public human-labelled sets)
  gives at least its threshold; without a combiner (an embedder it was not trained for),
  some evidence scores at least the support threshold, no rule fires on it and it states
  every number, date and name of the claim;
- NOT_ENOUGH_INFO: otherwise.

A response that abstains (refuses, deflects, does not know) has no claims: nothing in it
is ever SUPPORTED.

Rubric, correctness and relevance scores are derived from these signals; the reasoning says
which claims were not supported. Thresholds are calibrated for the local MiniLM embedder on
``tests/data/judge_quality.jsonl`` (see ``tests/bench/judge_quality.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.embedders.base import Embedder, Vectors
from engine.embedders.store import EmbeddingStore
from engine.judges.base import (
    ChunkUse,
    ClaimsResult,
    ClaimVerdict,
    ExtractedClaim,
    MetricScore,
    RubricResult,
    RubricScore,
)
from engine.judges.local.abstention import Abstention, detect_abstention
from engine.judges.local.combiner import Combiner, load_combiner, load_correctness, vetoed
from engine.judges.local.evidence import (
    Assessment,
    PreparedContext,
    Unit,
    assess,
    correctness_features,
)
from engine.judges.local.memo import Memo
from engine.judges.local.offload import off_loop
from engine.judges.local.rules import RULES_VERSION, content_stems
from engine.judges.local.texts import (
    BRIDGES,
    MAX_EMBEDDED_UNITS,
    NO_ANSWER,
    batch_texts,
    claim_spans,
    selected_units,
    short,
)
from engine.judges.local.thresholds import LOCAL_THRESHOLDS, Thresholds
from engine.judges.local.verified import verified_many
from engine.models import Verdict
from engine.text import Span, split_clauses, split_sentences
from engine.verifier.choice import ClaimVerifier
from engine.verifier.decide import question_prefix

__all__ = ["LOCAL_THRESHOLDS", "MAX_EMBEDDED_UNITS", "LocalJudge", "Thresholds", "claim_spans"]

LOCAL_VERSION = f"local-v2+{RULES_VERSION}"
"""The local judge's ``prompt_version``: changes when scoring logic changes."""


def _clip(x: float, lo: float = 0.0, hi: float = 1.0) -> float:
    return max(lo, min(hi, x))


class LocalJudge:
    """The default judge: claim split + embedding similarity + contradiction rules."""

    def __init__(
        self,
        embedder: Embedder,
        *,
        thresholds: Thresholds | None = None,
        combiner: Combiner | None = None,
        correctness: Combiner | None = None,
        use_combiner: bool = True,
        cache_size: int = 20_000,
        verifier: ClaimVerifier | None = None,
    ) -> None:
        """Judge with ``embedder``; the committed combiner is used with the local MiniLM
        embedder it was trained for unless ``combiner``/``correctness`` are given
        (``use_combiner=False`` loads none, as the training script needs)."""
        self._embedder = embedder
        self.verifier = verifier
        """Decides each claim from the evidence the embedder finds; None: the rules and the
        combiner decide."""
        if thresholds is None:
            thresholds = (
                LOCAL_THRESHOLDS
                if embedder.name.startswith("local")
                else Thresholds(embedder.default_threshold, embedder.default_threshold - 0.1)
            )
        self.thresholds = thresholds
        """Decision thresholds in use (recorded in prompt_version)."""
        trained_for = embedder.name.startswith("local")
        if combiner is None and use_combiner and trained_for:
            combiner = load_combiner()
        self.combiner = combiner
        """Learned support decision; None falls back to the thresholds."""
        if correctness is None and use_combiner and trained_for:
            correctness = load_correctness()
        self.correctness = correctness
        """Learned answer-vs-reference correctness; None averages the claims' support."""
        # A run's store is shared with the analyzer and graders; a judge built on a bare
        # embedder keeps its own.
        self._store = (
            embedder
            if isinstance(embedder, EmbeddingStore)
            else EmbeddingStore(embedder, capacity=cache_size)
        )
        # A batch of samples prepares each context, chunk, answer and reference once
        # ahead of judging: keep enough for the largest batch.
        self._contexts: Memo[tuple[str, ...], PreparedContext] = Memo(1024)
        # A sample's claims are verified against its context twice (claim faithfulness
        # and the rubric): the second time reads the first verdict.
        self._verdicts: Memo[tuple[str, tuple[str, ...], str], tuple[ClaimVerdict, float]]
        self._verdicts = Memo(4096)
        # A sample's answer is checked for abstention by claims, rubric, correctness and
        # relevance: the rules and prototype cosines run once per answer.
        self._abstentions: Memo[str, Abstention] = Memo(4096)

    @property
    def name(self) -> str:
        """Always ``local``: every record says it was scored by the local judge."""
        return "local"

    @property
    def prompt_version(self) -> str:
        """Scoring logic version with the thresholds in use."""
        t = self.thresholds
        learned = "".join(
            f"+{c.version}" for c in (self.combiner, self.correctness) if c is not None
        )
        decided = f"+verifier:{self.verifier.name}" if self.verifier is not None else ""
        return (
            f"{LOCAL_VERSION}{learned}{decided}@{self._embedder.name}"
            f":s{t.support:g}c{t.contradiction:g}"
        )

    # ------------------------------------------------------------------ embeddings
    def _embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        return self._store.embed(texts)

    def prefetch(self, samples: Sequence[tuple[str, str, str, Sequence[str]]]) -> None:
        """Embed, in one pass per step, what judging each (question, answer, reference,
        context) will embed (``engine.judges.local.texts.batch_texts``)."""
        batch_texts(self, self._embed, samples)

    def prepare(self, context: Sequence[str]) -> PreparedContext:
        """The context's sentences and clauses (cached; thread-safe)."""
        return self._prepare(context)

    def _prepare(self, context: Sequence[str]) -> PreparedContext:
        key = tuple(context)
        cached = self._contexts.get(key)
        if cached is not None:
            return cached
        units: list[Unit] = []
        sentences: list[str] = []
        seen: set[str] = set()
        for chunk_index, chunk in enumerate(context):
            for sentence in split_sentences(chunk):
                sentence_index = len(sentences)
                sentences.append(sentence.text)
                clauses = split_clauses(chunk, sentence)
                parts = [sentence] + (clauses if len(clauses) > 1 else [])
                for part in parts:
                    if part.text not in seen:
                        seen.add(part.text)
                        units.append(Unit(part.text, chunk_index, sentence_index))
        prepared = PreparedContext(
            units=tuple(units),
            stems=tuple(frozenset(content_stems(u.text)) for u in units),
            sentences=tuple(sentences),
            text="\n".join(context),
        )
        return self._contexts.put(key, prepared)

    # ------------------------------------------------------------------ protocol
    def abstention(self, response: str) -> Abstention:
        """Whether ``response`` declines, deflects or does not know (rules plus refusal
        prototypes compared with this judge's embedder)."""
        found = self._abstentions.get(response)
        if found is None:
            found = self._abstentions.put(response, detect_abstention(response, self._embed))
        return found

    async def extract_claims(self, response: str) -> ClaimsResult:
        """Sentences and clauses of the response, with their offsets; none for an
        abstention (a refusal states nothing to verify). Computed off the event loop."""
        return await off_loop(self.claims, response)

    def claims(self, response: str) -> ClaimsResult:
        """Synchronous :meth:`extract_claims`."""
        if self.abstention(response).abstained:
            return ClaimsResult(claims=())
        return ClaimsResult(
            claims=tuple(
                ExtractedClaim(text=s.text, start=s.start, end=s.end) for s in claim_spans(response)
            )
        )

    async def verify_claim(self, claim: str, context: Sequence[str]) -> ClaimVerdict:
        """Check ``claim`` against the context's sentences and clauses (off the loop)."""
        return await off_loop(self.verify, claim, context)

    def verify(self, claim: str, context: Sequence[str]) -> ClaimVerdict:
        """Synchronous :meth:`verify_claim` (the local judge never waits on I/O)."""
        return self.judged(claim, context)[0]

    @property
    def batches_claims(self) -> bool:
        """With a verifier, a sample's claims are verified in one call (``verify_claims``)."""
        return self.verifier is not None

    async def verify_claims(
        self, claims: Sequence[str], context: Sequence[str]
    ) -> list[ClaimVerdict]:
        """One verdict per claim, each naming the passages that state it (off the loop)."""
        return await off_loop(self.verify_many, claims, context)

    def verify_many(
        self, claims: Sequence[str], context: Sequence[str], prefix: str = ""
    ) -> list[ClaimVerdict]:
        """Synchronous :meth:`verify_claims`: claims not judged before go to the verifier
        together (one model call); without a verifier, one by one."""
        return [v for v, _ in self.judged_many(claims, context, prefix)]

    def judged_many(
        self, claims: Sequence[str], context: Sequence[str], prefix: str = ""
    ) -> list[tuple[ClaimVerdict, float]]:
        """:meth:`judged` of every claim, the new ones decided in one verifier call."""
        ctx = tuple(c for c in context if c.strip())
        known = {c: self._verdicts.get((c, ctx, prefix)) for c in dict.fromkeys(claims)}
        todo = [c for c, v in known.items() if v is None]
        if todo and self.verifier is not None:
            prepared = self._prepare(ctx)
            if prepared.units:
                assessed = [self.assess(c, prepared) for c in todo]
                decided = verified_many(self.verifier, todo, assessed, prepared, prefix)
                for claim, result in zip(todo, decided, strict=True):
                    known[claim] = self._verdicts.put((claim, ctx, prefix), result)
        return [known[c] or self.judged(c, ctx, prefix) for c in claims]

    def judged(
        self, claim: str, context: Sequence[str], prefix: str = ""
    ) -> tuple[ClaimVerdict, float]:
        """The verdict and the probability that ``context`` supports ``claim`` (the
        verifier's or the combiner's; without either, 1 for SUPPORTED and partial credit by
        similarity). ``prefix`` (a question) is read before the evidence by a verifier."""
        key = (claim, tuple(c for c in context if c.strip()), prefix)
        known = self._verdicts.get(key)
        if known is None:
            known = self._verdicts.put(key, self._judge_claim(claim, key[1], prefix))
        return known

    def _judge_claim(
        self, claim: str, context: Sequence[str], prefix: str = ""
    ) -> tuple[ClaimVerdict, float]:
        prepared = self._prepare(context)
        if not prepared.units:
            return ClaimVerdict(verdict="NOT_ENOUGH_INFO", evidence="No context to verify"), 0.0
        a = self.assess(claim, prepared)
        if self.verifier is not None:
            return verified_many(self.verifier, [claim], [a], prepared, prefix)[0]
        verdict = self._decide(a, prepared)
        if verdict.verdict == "CONTRADICTED":
            return verdict, 0.0
        if verdict.verdict == "SUPPORTED" and a.support is not None:
            return verdict, 1.0
        if self.combiner is not None:
            p = self.combiner.probability(a.features)
            right = p if verdict.verdict == "SUPPORTED" else 1.0 - p
            verdict = verdict.model_copy(update={"confidence": round(right, 4)})
            return verdict, p if verdict.verdict == "SUPPORTED" else min(p, 0.5)
        if verdict.verdict == "SUPPORTED":
            return verdict, 1.0
        sim, support = verdict.similarity or 0.0, self.thresholds.support
        return verdict, 0.75 * _clip((sim - 0.2) / (support - 0.2))

    def _cosines(self, prepared: PreparedContext, text: str) -> np.ndarray:
        """Cosine of ``text`` with each context unit. A long context (over
        ``MAX_EMBEDDED_UNITS`` units) embeds only the units sharing most content words with
        ``text``; the others get -1. WiCE articles hold ~180 units each, and embedding every
        one of them per claim ran at ~20 claims/min on the shared benchmark machine."""
        n = len(prepared.units)
        idx = selected_units(prepared, text)
        vectors = self._embed([text, *(prepared.units[i].text for i in idx)])
        out = np.full(n, -1.0)
        out[idx] = vectors[1:] @ vectors[0]
        return out

    def assess(self, claim: str, prepared: PreparedContext) -> Assessment:
        """The evidence ``claim`` has in a prepared context (features included)."""
        t = self.thresholds
        return assess(
            claim,
            self._cosines(prepared, claim),
            prepared,
            support_threshold=t.support,
            contradiction_threshold=t.contradiction,
            lexical_weight=t.lexical_weight,
        )

    def features(self, claim: str, context: Sequence[str]) -> Assessment | None:
        """The assessment (with the combiner's features) of ``claim`` in ``context``; None
        without context. The training script reads these."""
        prepared = self._prepare([c for c in context if c.strip()])
        return self.assess(claim, prepared) if prepared.units else None

    def _decide(self, a: Assessment, prepared: PreparedContext) -> ClaimVerdict:
        t = self.thresholds

        def verdict(kind: Verdict, i: int, rule: str | None = None) -> ClaimVerdict:
            return ClaimVerdict(
                verdict=kind,
                evidence=prepared.units[i].text,
                similarity=round(float(a.cosines[i]), 4),
                rule=rule,
            )

        support, contra = a.support, a.contra
        if contra is not None and (support is None or support[0] < contra[0] - t.margin):
            return verdict("CONTRADICTED", contra[1], contra[2].split(":", 1)[0])
        shown = support[1] if support else a.partial[1] if a.partial else a.top
        supported = support is not None
        if self.combiner is not None and not supported and not vetoed(a.features):
            # Clean support by the rules stands; the combiner decides the rest (evidence
            # spread over sentences, paraphrases the rules cannot read).
            supported = self.combiner.probability(a.features) >= self.combiner.threshold
        return verdict("SUPPORTED" if supported else "NOT_ENOUGH_INFO", shown)

    async def score_rubric(
        self, question: str, context: Sequence[str], answer: str
    ) -> RubricResult:
        """Faithfulness from the claims' verdicts; completeness from coverage and structure
        (computed off the event loop)."""
        return await off_loop(self.rubric, question, context, answer)

    def rubric(self, question: str, context: Sequence[str], answer: str) -> RubricResult:
        """Synchronous :meth:`score_rubric`."""
        if answer.strip() and self.abstention(answer).abstained:
            declined = "Local judge: the answer declines to answer; no claims to check."
            return RubricResult(
                faithfulness=RubricScore(score=5.0, reasoning=declined),
                completeness=RubricScore(score=1.0, reasoning=declined),
            )
        claims = claim_spans(answer)
        context = [c for c in context if c.strip()]
        verdicts = self.verify_many([c.text for c in claims], context) if context else []
        return RubricResult(
            faithfulness=self._faithfulness(claims, verdicts, has_context=bool(context)),
            completeness=self._completeness(question, context, answer, claims),
        )

    def _faithfulness(
        self, claims: list[Span], verdicts: list[ClaimVerdict], *, has_context: bool
    ) -> RubricScore:
        if not claims:
            return RubricScore(score=5.0, reasoning="Local judge: the answer makes no claims.")
        if not has_context:
            return RubricScore(
                score=5.0, reasoning="Local judge: No context to verify; faithfulness not assessed."
            )
        n = len(claims)
        supported = sum(v.verdict == "SUPPORTED" for v in verdicts)
        contradicted = [
            (c, v) for c, v in zip(claims, verdicts, strict=True) if v.verdict == "CONTRADICTED"
        ]
        unsupported = [
            c for c, v in zip(claims, verdicts, strict=True) if v.verdict == "NOT_ENOUGH_INFO"
        ]
        s, x = supported / n, len(contradicted) / n
        if s == 0 or x >= 0.5:
            score = 1.0
        elif s == 1:
            score = 5.0
        elif s >= 0.75 and not contradicted:
            score = 4.0
        elif s >= 0.5:
            score = 3.0
        else:
            score = 2.0
        parts = [f"Local judge: {supported} of {n} claims supported by the context."]
        if contradicted:
            parts.append(
                "Contradicted: "
                + "; ".join(f"'{short(c.text)}' ({v.rule})" for c, v in contradicted)
                + "."
            )
        if unsupported:
            parts.append(
                "Unsupported: " + "; ".join(f"'{short(c.text)}'" for c in unsupported) + "."
            )
        return RubricScore(score=score, reasoning=" ".join(parts))

    def _completeness(
        self, question: str, context: Sequence[str], answer: str, claims: list[Span]
    ) -> RubricScore:
        if not answer.strip() or not claims:
            return RubricScore(score=1.0, reasoning="Local judge: the answer is empty.")
        if NO_ANSWER.search(answer) and len(claims) <= 2:
            return RubricScore(score=1.0, reasoning="Local judge: the answer declines to answer.")
        answer_vectors = self._embed([c.text for c in claims] + [answer])
        question_vector = self._embed([question])[0]
        addresses = _clip((float(np.max(answer_vectors @ question_vector)) - 0.15) / 0.45)
        coverage = 1.0
        if context:
            prepared = self._prepare(context)
            if prepared.units:
                relevance = self._cosines(prepared, question)
                # The context sentences that bear on the question are what a complete
                # answer should cover; fall back to the three closest ones.
                k = max(1, min(3, len(prepared.units)))
                wanted = [int(i) for i in np.argsort(-relevance)[:k]]
                unit_vectors = self._embed([prepared.units[i].text for i in wanted])
                best = np.max(unit_vectors @ answer_vectors.T, axis=1)
                coverage = float(np.mean(best >= self.thresholds.support))
        words = len(answer.split())
        bridged = bool(BRIDGES.search(answer))
        raw = 0.35 * addresses + 0.35 * coverage + 0.15 * bridged + 0.15 * _clip(words / 40)
        score = float(round(1 + 4 * raw))
        if words < 6:
            score = min(score, 2.0)
        if not bridged:
            score = min(score, 4.0)
        reasoning = (
            f"Local judge: addresses the question {addresses:.2f}, covers {coverage:.0%} of the "
            f"most relevant context, {words} words, "
            + ("explains why (bridging language)." if bridged else "no explanation of why.")
        )
        return RubricScore(score=max(1.0, min(5.0, score)), reasoning=reasoning)

    async def score_correctness(self, question: str, answer: str, reference: str) -> MetricScore:
        """Alignment with the reference: the mean probability that the answer states each
        reference claim (0 for a contradicted one). Computed off the event loop."""
        return await off_loop(self.correctness_score, question, answer, reference)

    def correctness_score(self, question: str, answer: str, reference: str) -> MetricScore:
        """Synchronous :meth:`score_correctness`."""
        ref_claims = [s.text for s in claim_spans(reference)]
        if not ref_claims:
            return MetricScore(score=1.0, reasoning="Local judge: no reference answer.")
        if not answer.strip():
            return MetricScore(score=1.0, reasoning="Local judge: empty answer.")
        if self.abstention(answer).abstained:
            return MetricScore(score=1.0, reasoning="Local judge: the answer declines to answer.")
        prefix = question_prefix(question, answer)
        judged = self.judged_many(ref_claims, [answer], prefix)
        raw = float(np.mean([p for _, p in judged]))
        if self.verifier is not None:
            # The verifier's probabilities are calibrated: a contradicted reference claim
            # counts 0, a stated one its probability.
            raw = float(np.mean([0.0 if v.verdict == "CONTRADICTED" else p for v, p in judged]))
        elif self.correctness is not None:
            features = self.correctness_features(question, answer, reference, judged)
            raw = self.correctness.probability(features)
        stated = sum(v.verdict == "SUPPORTED" for v, _ in judged)
        contradicted = sum(v.verdict == "CONTRADICTED" for v, _ in judged)
        return MetricScore(
            score=round(1 + 4 * raw, 2),
            reasoning=(
                f"Local judge: {stated} of {len(ref_claims)} reference claims stated, "
                f"{contradicted} contradicted; agreement {raw:.2f}."
            ),
        )

    def correctness_features(
        self,
        question: str,
        answer: str,
        reference: str,
        judged: Sequence[tuple[ClaimVerdict, float]] | None = None,
    ) -> np.ndarray:
        """The correctness combiner's features; ``judged`` are the reference claims already
        verified against the answer."""
        if judged is None:
            judged = [self.judged(s.text, [answer]) for s in claim_spans(reference)]
        back = [self.judged(s.text, [reference]) for s in claim_spans(answer)]
        vectors = self._embed([question, answer, reference])
        return correctness_features(vectors, answer, reference, judged, back)

    async def score_relevance(self, question: str, answer: str) -> MetricScore:
        """Cosine of question and answer (best of the whole answer and its claims), on 1-5
        (off the event loop)."""
        return await off_loop(self.relevance, question, answer)

    def relevance(self, question: str, answer: str) -> MetricScore:
        """Synchronous :meth:`score_relevance`."""
        if not answer.strip():
            return MetricScore(score=1.0, reasoning="Local judge: empty answer.")
        if self.abstention(answer).abstained:
            return MetricScore(score=1.0, reasoning="Local judge: the answer declines to answer.")
        texts = [answer] + [s.text for s in claim_spans(answer)]
        vectors = self._embed([question, *texts])
        best = float(np.max(vectors[1:] @ vectors[0]))
        raw = _clip((best - 0.1) / 0.5)
        return MetricScore(
            score=round(1 + 4 * raw, 1),
            reasoning=f"Local judge: question-answer cosine {best:.2f}.",
        )

    async def chunk_used(self, claims: Sequence[str], chunk: str) -> ChunkUse:
        """A chunk is used when it supports at least one of the claims (off the loop)."""
        return await off_loop(self.chunk_use, claims, chunk)

    def chunk_use(self, claims: Sequence[str], chunk: str) -> ChunkUse:
        """Synchronous :meth:`chunk_used`."""
        for claim in claims:
            verdict = self.verify(claim, [chunk])
            if verdict.verdict == "SUPPORTED":
                return ChunkUse(used=True, reasoning=f"Supports '{short(claim)}'.")
        return ChunkUse(used=False, reasoning="Supports none of the claims.")
