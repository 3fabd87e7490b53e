"""Test cases from ground-truth pages, in the eval-harness write-up's styles.

Styles (the write-up's document-grounded generation; RAGAS / DeepEval evolutions):

- ``simple``: one fact of one chunk, asked directly.
- ``reasoning``: two facts of one page that the answer must connect.
- ``multi-context``: two facts from different chunks (other pages when there are any):
  the answer needs both passages.
- ``adversarial``: a false premise (a number of the page changed); a good answer
  corrects it from the page.
- ``out-of-scope``: something the pages never mention; a good answer says the sources
  do not say, instead of guessing.

Every case carries its ground-truth chunks (with page URLs), an expected answer built
from the facts, and claims whose source chunk is in ``metadata.claim_chunks``. Drafts are
worded offline as a person would ask (``phrasing``); with an LLM writer the model rewrites each
draft's question and answer from the same chunks. Near-duplicate questions are dropped
with the embedder (cosine at or above ``dedupe_threshold``).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from engine.models import ExpectedAnswer, ExpectedClaim, GroundTruthChunk, TestCase
from engine.testsets.build import facts as F, phrasing as P
from engine.testsets.build.pages import Chunk, Page

STYLES: tuple[str, ...] = ("simple", "reasoning", "multi-context", "adversarial", "out-of-scope")
DEFAULT_MIX: dict[str, float] = {
    "simple": 0.4,
    "reasoning": 0.2,
    "multi-context": 0.2,
    "adversarial": 0.1,
    "out-of-scope": 0.1,
}
"""Share of each style when all are asked for (RAGAS's default leans on simple, too)."""
DEDUPE_THRESHOLD = 0.92
"""Questions this close (cosine, local MiniLM) to a kept one are near-duplicates."""


@dataclass(frozen=True)
class Draft:
    """A case before it is written: style, question, answer and where they come from."""

    style: str
    question: str
    answer: str
    claims: tuple[tuple[str, Chunk | None], ...]
    """(claim text, chunk it comes from; None when no chunk states it)."""
    chunks: tuple[Chunk, ...]
    writer: str = "offline-v1"
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Generated:
    """What a generation produced and dropped."""

    cases: list[TestCase]
    duplicates: int
    """Drafts dropped as near-duplicates of a kept question."""
    short: dict[str, int]
    """Styles that got fewer cases than asked, and how many fewer."""
    failed: list[str] = field(default_factory=list)
    """Drafts an LLM writer could not write (one line each)."""


def quotas(count: int, styles: Sequence[str]) -> dict[str, int]:
    """Cases per style: ``count`` split by ``DEFAULT_MIX`` renormalised, largest remainders."""
    weights = {s: DEFAULT_MIX[s] for s in styles}
    total = sum(weights.values())
    exact = {s: count * w / total for s, w in weights.items()}
    out = {s: int(v) for s, v in exact.items()}
    for s in sorted(exact, key=lambda s: out[s] - exact[s])[: count - sum(out.values())]:
        out[s] += 1
    return out


def drafts(
    pages: Sequence[Page], styles: Sequence[str], rng: random.Random
) -> dict[str, list[Draft]]:
    """Every draft the templates can make from the pages, per style, in a seeded order."""
    chunks = [c for p in pages for c in p.chunks]
    found = F.select_facts(chunks)
    brand = F.brand_of(chunks)
    pools: dict[str, list[Draft]] = {s: [] for s in styles}
    for fact in found:
        question, span = _question(fact)
        answer = f"{span}. {fact.sentence}" if span else fact.sentence
        pools.get("simple", []).append(
            Draft("simple", question, answer, ((fact.sentence, fact.chunk),), (fact.chunk,))
        )
        premise = F.false_premise(fact)
        if premise is not None and "adversarial" in pools:
            pools["adversarial"].append(
                Draft(
                    "adversarial",
                    P.yes_no(premise[1]),
                    f"No. {fact.sentence}",
                    ((fact.sentence, fact.chunk),),
                    (fact.chunk,),
                    extra={"false_premise": premise[1]},
                )
            )
    by_page: dict[str, list[F.Fact]] = {}
    for fact in found:
        by_page.setdefault(fact.chunk.page_url, []).append(fact)
    if "reasoning" in pools:
        for facts in by_page.values():
            for a, b in itertools.pairwise(facts):
                pools["reasoning"].append(_reasoning(a, b, brand, rng))
    if "multi-context" in pools:
        for i, a in enumerate(found):
            others = [b for b in found if b.chunk.page_url != a.chunk.page_url]
            others = others or [b for b in found if b.chunk.chunk_id != a.chunk.chunk_id]
            if others:
                b = others[(i * 7) % len(others)]
                pools["multi-context"].append(_multi(a, b))
    if "out-of-scope" in pools and chunks:
        corpus = " ".join(c.text for c in chunks)
        for i, topic in enumerate(F.out_of_scope_topics(corpus)):
            who = brand or chunks[0].title
            chunk = chunks[(i * 5) % len(chunks)]
            statement = f"The sources do not say whether {who} offers {topic}."
            pools["out-of-scope"].append(
                Draft(
                    "out-of-scope",
                    f"Does {who} offer {topic}?",
                    statement,
                    ((statement, None),),
                    (chunk,),
                )
            )
    for pool in pools.values():
        rng.shuffle(pool)
    return pools


def _question(fact: F.Fact) -> tuple[str, str]:
    """(question, answer span) as a person would ask it (``phrasing``); a sentence it cannot
    read gets the fact's echo question, and one without a span a plain "what about"."""
    asked = P.question_for(fact.sentence)
    if asked is not None:
        return asked
    echo, span = F.simple_question(fact)
    if span:
        return echo, span
    return f"What should I know about {P.topic(fact.sentence)}?", ""


def _reasoning(a: F.Fact, b: F.Fact, brand: str, rng: random.Random) -> Draft:
    first, second = P.topic(a.sentence), P.topic(b.sentence)
    templates = P.SAME_TOPIC_QUESTIONS if first.lower() == second.lower() else P.PAIR_QUESTIONS
    question = templates[rng.randrange(len(templates))].format(
        a=first, b=second, brand=brand or a.chunk.title
    )
    claims = ((a.sentence, a.chunk), (b.sentence, b.chunk))
    chunks = tuple(dict.fromkeys((a.chunk, b.chunk)))
    return Draft("reasoning", question, f"{a.sentence} {b.sentence}", claims, chunks)


def _multi(a: F.Fact, b: F.Fact) -> Draft:
    question = P.join_questions(_question(a)[0], _question(b)[0])
    claims = ((a.sentence, a.chunk), (b.sentence, b.chunk))
    return Draft(
        "multi-context", question, f"{a.sentence} {b.sentence}", claims, (a.chunk, b.chunk)
    )


Embed = Callable[[Sequence[str]], Any]


def pick(
    pools: dict[str, list[Draft]],
    wanted: dict[str, int],
    embed: Embed | None,
    threshold: float = DEDUPE_THRESHOLD,
) -> tuple[list[Draft], int]:
    """Drafts up to each style's quota, skipping near-duplicates of any kept question."""
    order = [d for s in wanted for d in pools.get(s, [])]
    vectors = (
        np.asarray(embed([d.question for d in order]), dtype=np.float32)
        if embed and order
        else None
    )
    kept: list[int] = []
    taken = dict.fromkeys(wanted, 0)
    duplicates = 0
    seen_text: set[str] = set()
    for i, draft in enumerate(order):
        if taken[draft.style] >= wanted[draft.style]:
            continue
        key = " ".join(draft.question.lower().split())
        duplicate = key in seen_text
        if not duplicate and vectors is not None and kept:
            duplicate = float(np.max(vectors[kept] @ vectors[i])) >= threshold
        if duplicate:
            duplicates += 1
            continue
        seen_text.add(key)
        kept.append(i)
        taken[draft.style] += 1
    return [order[i] for i in kept], duplicates


def to_case(draft: Draft, number: int, domain: str, brand: str) -> TestCase:
    """The native test case of a draft."""
    claims = tuple(
        ExpectedClaim(id=f"c{i}", text=text, importance="required")
        for i, (text, _) in enumerate(draft.claims, start=1)
    )
    claim_chunks = {f"c{i}": c.chunk_id for i, (_, c) in enumerate(draft.claims, start=1) if c}
    return TestCase(
        id=f"{draft.style}-{number:03d}",
        domain=draft.chunks[0].domain if draft.chunks and draft.chunks[0].domain else domain,
        query=draft.question,
        expected_answer=ExpectedAnswer(text=draft.answer, claims=claims),
        ground_truth=tuple(
            GroundTruthChunk(chunk_id=c.chunk_id, page_url=c.page_url, text=c.text)
            for c in draft.chunks
        ),
        brand_names=(brand,) if brand else (),
        tags=(draft.style,),
        metadata={
            "style": draft.style,
            "generator": draft.writer,
            "claim_chunks": claim_chunks,
            **draft.extra,
        },
    )


def plan_drafts(
    pages: Sequence[Page],
    *,
    count: int,
    styles: Sequence[str] = STYLES,
    seed: int = 0,
    embed: Embed | None = None,
    threshold: float = DEDUPE_THRESHOLD,
) -> tuple[list[Draft], int, dict[str, int]]:
    """(chosen drafts, near-duplicates dropped, quota per style): nothing remote is called,
    so ``--estimate`` plans exactly the drafts a generation would send to an LLM."""
    wanted = quotas(count, styles)
    pools = drafts(pages, styles, random.Random(seed))
    chosen, duplicates = pick(pools, wanted, embed, threshold)
    return chosen, duplicates, wanted


def generate(
    pages: Sequence[Page],
    *,
    count: int,
    styles: Sequence[str] = STYLES,
    seed: int = 0,
    embed: Embed | None = None,
    domain: str = "",
    threshold: float = DEDUPE_THRESHOLD,
    rewrite: Callable[[list[Draft]], tuple[list[Draft], list[str]]] | None = None,
) -> Generated:
    """Cases from ``pages``: drafts per style, near-duplicates dropped, optionally
    rewritten by an LLM (``rewrite``), numbered per style."""
    chosen, duplicates, wanted = plan_drafts(
        pages, count=count, styles=styles, seed=seed, embed=embed, threshold=threshold
    )
    failed: list[str] = []
    if rewrite is not None:
        chosen, failed = rewrite(chosen)
    brand = F.brand_of([c for p in pages for c in p.chunks])
    numbers = dict.fromkeys(styles, 0)
    cases = []
    for draft in sorted(chosen, key=lambda d: list(styles).index(d.style)):
        numbers[draft.style] += 1
        cases.append(to_case(draft, numbers[draft.style], domain, brand))
    short = {s: wanted[s] - numbers[s] for s in styles if numbers[s] < wanted[s]}
    return Generated(cases, duplicates, short, failed)


def with_question(draft: Draft, question: str, answer: str, writer: str) -> Draft:
    """The draft with an LLM's question and answer (claims and chunks stay the page's)."""
    return replace(draft, question=question, answer=answer, writer=writer)
