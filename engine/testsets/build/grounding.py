"""Generated answers the passages support: each sentence of an LLM-written answer is checked
against the draft's passages with the claim verifier, and a case whose answer says
something the passages do not support is dropped (a question about one product's price
written with a claim about another's, say).

The verifier (``engine.verifier``) reads each answer sentence against the passage sentences
most relevant to it (``decide_many``): a sentence is kept when it is more likely supported
than contradicted or not stated. Out-of-scope answers say that the sources do not say, so
they have nothing to check; an adversarial answer's correction names the false premise's
wrong value, which the passages never state, so the sentences that repeat it are not
checked (the rest of the answer, with the true value, is).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from engine.testsets.build.generate import Draft
from engine.verifier.choice import ClaimVerifier
from engine.verifier.decide import decide_many, question_prefix, rank
from engine.verifier.evidence import split_passages

UNCHECKED_STYLES = frozenset({"out-of-scope"})
"""Styles whose answer is an abstention: no claim about the passages to verify."""

SHORT_SENTENCE_WORDS = 6
"""An answer sentence this short ("$9 per month.") is read with its question: alone it
names nothing the passages could support."""

_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_REPLY_WORDS = frozenset({"yes", "no", "not", "quite", "actually", "correct", "incorrect", "true",
                          "false", "right", "wrong", "that", "is", "s", "isn", "t"})  # fmt: skip
"""Words of a bare reply ("No.", "Yes, that is right."): nothing to verify in it."""

REASONS = {"contradicted": "contradicted by the passages", "not_supported": "not in the passages"}
"""How a dropped case's report names the verdict of its sentence."""


@dataclass(frozen=True)
class Unsupported:
    """A generated case dropped: the answer sentence the passages do not support, and why."""

    draft: Draft
    sentence: str
    verdict: str
    """``contradicted`` or ``not_supported``."""

    def line(self) -> str:
        """One report line: the style, the question and the sentence with its reason."""
        return (
            f"{self.draft.style} case {self.draft.question!r}: the answer's "
            f"{self.sentence!r} is {REASONS[self.verdict]}"
        )


def _premise_values(draft: Draft, passages: str) -> set[str]:
    premise = str(draft.extra.get("false_premise", ""))
    stated = set(_NUMBER.findall(passages))
    return {n for n in _NUMBER.findall(premise) if n not in stated}


def answer_claims(draft: Draft) -> list[str]:
    """The sentences of the draft's answer to verify, short ones with their question."""
    if draft.style in UNCHECKED_STYLES:
        return []
    passages = " ".join(c.text for c in draft.chunks)
    wrong = _premise_values(draft, passages)
    out = []
    for sentence in split_passages(draft.answer):
        if wrong & set(_NUMBER.findall(sentence)):
            continue  # the correction of the false premise: the passages state the true value
        if set(re.findall(r"[a-z]+", sentence.lower())) <= _REPLY_WORDS:
            continue
        # An adversarial question states the false premise: never read it as evidence.
        asks = draft.style != "adversarial" and question_prefix(draft.question, draft.answer)
        if len(sentence.split()) <= SHORT_SENTENCE_WORDS and asks:
            sentence = f"{draft.question.strip()} {sentence}"
        out.append(sentence)
    return out


def check_drafts(
    verifier: ClaimVerifier, drafts: Sequence[Draft]
) -> tuple[list[Draft], list[Unsupported]]:
    """(drafts whose every answer sentence the passages support, the dropped ones with the
    first sentence they do not support)."""
    kept: list[Draft] = []
    dropped: list[Unsupported] = []
    for draft in drafts:
        claims = answer_claims(draft)
        sentences = [s for c in draft.chunks for s in split_passages(c.text)]
        if not claims:
            kept.append(draft)
            continue
        orders = [rank(claim, sentences, None) for claim in claims]
        decisions = decide_many(verifier, claims, sentences, orders)
        bad = next(
            (
                (c, d.verdict)
                for c, d in zip(claims, decisions, strict=True)
                if d.verdict != "supported"
            ),
            None,
        )
        if bad is None:
            kept.append(draft)
        else:
            dropped.append(Unsupported(draft, bad[0], bad[1]))
    return kept, dropped


def unsupported_summary(dropped: Sequence[Unsupported]) -> str:
    """The report line: how many generated cases were dropped, by reason."""
    if not dropped:
        return "answers checked against the passages: none dropped"
    counts = {v: sum(1 for u in dropped if u.verdict == v) for v in REASONS}
    why = ", ".join(f"{n} {REASONS[v]}" for v, n in counts.items() if n)
    return f"answers the passages do not support, dropped: {len(dropped)} ({why})"
