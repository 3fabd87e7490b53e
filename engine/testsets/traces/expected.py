"""Expectations for production traces: the tool calls (and reference answer) a correct
trajectory has, taken from a test set a team keeps for its agent, so ``monitor`` and
``traces import`` score production agents with the same tool metrics as written cases.

A trace takes the expectations of the case with its trace id, else of the case asking the
same question (case and spaces aside): a support agent's traffic repeats its intents ("where
is my order", "cancel my plan"), and the team writes the right calls once per intent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.models import TestCase


def question_key(query: str) -> str:
    """A question as matched: case folded, runs of white space as one space."""
    return " ".join(query.casefold().split())


@dataclass(frozen=True)
class Expectations:
    """The cases of an expectations test set, by id and by question."""

    by_id: dict[str, TestCase]
    by_question: dict[str, TestCase]

    @classmethod
    def of(cls, cases: Sequence[TestCase]) -> Expectations:
        """The expectations of ``cases`` (the first case of a question wins)."""
        by_question: dict[str, TestCase] = {}
        for case in cases:
            by_question.setdefault(question_key(case.query), case)
        return cls({c.id: c for c in cases}, by_question)

    def for_case(self, case: TestCase) -> TestCase | None:
        """The case whose expectations ``case`` takes, or None."""
        return self.by_id.get(case.id) or self.by_question.get(question_key(case.query))


def with_expectations(
    cases: Sequence[TestCase], expectations: Expectations
) -> tuple[list[TestCase], int]:
    """``cases`` with the expected tools, their order rule and the reference answer of
    their matching expectation (a trace's own reference is kept when the expectation has
    none), and how many matched."""
    out: list[TestCase] = []
    matched = 0
    for case in cases:
        found = expectations.for_case(case)
        if found is None:
            out.append(case)
            continue
        matched += 1
        update: dict[str, Any] = {
            "expected_tools": found.expected_tools,
            "expected_tools_ordered": found.expected_tools_ordered,
        }
        if found.expected_answer.text or found.expected_answer.claims:
            update["expected_answer"] = found.expected_answer
        # Validated again: the order rule needs expected tools, and the copy must hold.
        out.append(TestCase.model_validate({**case.model_dump(), **update}))
    return out, matched
