"""What the local judge reads: claim spans, the context units it embeds for a text, and
every text a sample's judging will embed (so a batch of samples embeds them in one pass).

``sample_texts`` follows ``engine.scoring.judging.judge_sample`` with the local judge step
by step (abstention, claims, verification against the context and each chunk, rubric,
correctness both ways, relevance). It only decides what is embedded ahead of time: a text
it misses is embedded when the judge reaches it, and a text it adds needlessly costs one
vector, so a mistake here changes speed, never a verdict.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from engine.judges.local.abstention import ABSTENTION_PROTOTYPES, Abstention, is_courtesy
from engine.judges.local.evidence import PreparedContext
from engine.judges.local.rules import content_stems
from engine.text import Span, split_clauses, split_sentences

MAX_EMBEDDED_UNITS = 48
"""Context units embedded per claim; longer contexts are pre-selected by shared words."""

_LEADING_CONNECTIVE = re.compile(
    r"^(?:and|but|while|whereas|which|so|or|because|also|however|though|although)\b[,]?\s*",
    re.IGNORECASE,
)
_ANSWER_PARTICLE = re.compile(
    r"^(?:yes|no|yeah|yep|nope|sure|certainly|absolutely|of course|indeed|correct|right|"
    r"okay|ok|well|great question|good question)\s*[,!.:;\u2014-]+\s*",
    re.IGNORECASE,
)
"""An answer particle before the statement ("Yes, Acme supports SAML"): it answers the
question and states nothing the context could support, so it is not part of the claim."""

BRIDGES = re.compile(
    r"\b(?:because|since|so that|so you|which means|this means|therefore|thus|as a result|"
    r"in order to|helps?|lets? you|allows? you|enables?|ideal for|useful for|suited to|"
    r"well suited|essential for|designed for|fits|if you|for your|you can|you'll|you will)\b",
    re.IGNORECASE,
)
NO_ANSWER = re.compile(
    r"\b(?:no relevant|i don't know|i do not know|cannot answer|can't answer|not sure|"
    r"no information|unable to)\b",
    re.IGNORECASE,
)


CLAIM_SPANS_MEMO = 2048
"""Texts whose claim spans are kept: judging one sample reads its answer's and its
reference's claims up to six times (what to embed, extraction, correctness both ways,
relevance), and the spans are a pure function of the text."""


def claim_spans(response: str) -> list[Span]:
    """The response's claims as verbatim spans: clauses where a sentence has several, else
    the sentence; questions and connectives at the start are left out."""
    return list(_claim_spans(response))


@functools.lru_cache(maxsize=CLAIM_SPANS_MEMO)
def _claim_spans(response: str) -> tuple[Span, ...]:
    out: list[Span] = []
    for sentence in split_sentences(response):
        if sentence.text.rstrip().endswith("?") or is_courtesy(sentence.text):
            continue  # questions, greetings, thanks and offers of help state nothing
        clauses = split_clauses(response, sentence)
        parts = clauses if len(clauses) > 1 else [sentence]
        for part in parts:
            particle = _ANSWER_PARTICLE.match(part.text)
            start = part.start + (particle.end() if particle else 0)
            m = _LEADING_CONNECTIVE.match(response[start : part.end])
            start += m.end() if m else 0
            text = response[start : part.end].rstrip(" .;:,!")
            if (len(text.split()) < 2 and len(parts) > 1) or is_courtesy(text):
                continue  # "Here is what I found: ..." introduces the claim, is none
            if text:
                out.append(Span(start, start + len(text), text))
    return tuple(out)


def selected_units(prepared: PreparedContext, text: str) -> list[int]:
    """Indexes of the context units compared with ``text``: all of them, or in a context
    of more than ``MAX_EMBEDDED_UNITS`` units the ones sharing most content words with it.
    WiCE articles hold ~180 units each, and embedding every one of them per claim ran at
    ~20 claims/min on the shared benchmark machine."""
    n = len(prepared.units)
    if n <= MAX_EMBEDDED_UNITS:
        return list(range(n))
    stems = content_stems(text)
    overlap = [len(stems & s) for s in prepared.stems]
    return sorted(sorted(range(n), key=lambda i: (-overlap[i], i))[:MAX_EMBEDDED_UNITS])


class JudgeReader(Protocol):
    """What ``sample_texts`` reads of the local judge."""

    def prepare(self, context: Sequence[str]) -> PreparedContext:
        """The context's units (cached by the judge)."""
        ...

    def abstention(self, response: str) -> Abstention:
        """The judge's abstention check (embeds the response's sentences)."""
        ...


def abstention_texts(text: str) -> list[str]:
    """What the abstention check of ``text`` embeds: its sentences and the prototypes."""
    sentences = [s.text for s in split_sentences(text)]
    return [*sentences, *ABSTENTION_PROTOTYPES] if sentences else []


def sample_texts(
    judge: JudgeReader, question: str, answer: str, reference: str, context: Sequence[str]
) -> list[str]:
    """Every text judging ``answer`` embeds. Call it once the abstention texts of the
    answer are embedded (it runs the judge's abstention check)."""
    out: dict[str, None] = {}

    def need(texts: Iterable[str]) -> None:
        out.update(dict.fromkeys(texts))

    def units_for(prepared: PreparedContext, texts: Iterable[str]) -> None:
        for text in texts:
            need([text])
            need(prepared.units[i].text for i in selected_units(prepared, text))

    chunks = [c for c in context if c.strip()]
    claims: list[str] = []
    if answer.strip() and not judge.abstention(answer).abstained:
        claims = [s.text for s in claim_spans(answer)]
        need([question, answer])
    reference_claims = [s.text for s in claim_spans(reference)] if reference.strip() else []
    if claims and reference_claims:
        # score_correctness: reference claims against the answer, and back.
        need([reference])
        units_for(judge.prepare([answer]), reference_claims)
        units_for(judge.prepare([reference]), claims)
    basis = claims
    if not claims and reference_claims and chunks:
        # evaluate_rag verifies the reference's claims when the answer has none.
        need(abstention_texts(reference))
        basis = reference_claims
    if chunks and basis:
        whole = judge.prepare(chunks)
        units_for(whole, [*basis, question] if claims else basis)
        for chunk in chunks:
            units_for(judge.prepare([chunk]), basis)
    return list(out)


def batch_texts(
    judge: JudgeReader,
    embed: Callable[[Sequence[str]], object],
    samples: Sequence[tuple[str, str, str, Sequence[str]]],
) -> None:
    """Embed, in two passes, what judging each (question, answer, reference, context)
    will embed: first the answers' abstention texts, then everything else."""
    first: dict[str, None] = {}
    for _, answer, _, _ in samples:
        if answer.strip():
            first.update(dict.fromkeys(abstention_texts(answer)))
    if first:
        embed(list(first))
    rest: dict[str, None] = {}
    for question, answer, reference, context in samples:
        rest.update(dict.fromkeys(sample_texts(judge, question, answer, reference, context)))
    if rest:
        embed(list(rest))


def short(text: str, limit: int = 80) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
