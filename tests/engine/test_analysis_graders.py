"""``is-refusal``, ``factual-correctness`` and ``nli`` on tiny inputs, scores computed by hand.

The claim and verdict steps are the judge's (its claim extraction and verifier); here a
judge answers from a table so every figure is known, and the local judge runs the real
steps where the verdict is plain."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from engine.graders import GradeInput, GraderError, GraderResult, resolve_specs
from engine.graders.analysis import f1
from engine.graders.base import Grader
from engine.graders.registry import build_grader
from engine.graders.spec import builtin_spec, parse_grader
from engine.judges.base import ClaimsResult, ClaimVerdict, ExtractedClaim
from engine.judges.local.judge import LocalJudge
from engine.models import ExpectedAnswer, ExpectedClaim, TestCase
from tests.engine.test_local_judge import HashEmbedder


class TableJudge(LocalJudge):
    """Claims are the parts between semicolons; a claim is SUPPORTED when the context
    contains it word for word, CONTRADICTED when it is listed as contradicted."""

    def __init__(self, contradicted: Sequence[str] = ()) -> None:
        super().__init__(HashEmbedder())
        self.contradicted = set(contradicted)
        self.verified: list[tuple[str, tuple[str, ...]]] = []

    async def extract_claims(self, response: str) -> ClaimsResult:
        parts = [p.strip() for p in response.split(";") if p.strip()]
        return ClaimsResult(claims=tuple(ExtractedClaim(text=p) for p in parts))

    async def verify_claim(self, claim: str, context: Sequence[str]) -> ClaimVerdict:
        self.verified.append((claim, tuple(context)))
        if claim in self.contradicted:
            return ClaimVerdict(verdict="CONTRADICTED")
        found = any(claim.rstrip(".") in c for c in context)
        return ClaimVerdict(verdict="SUPPORTED" if found else "NOT_ENOUGH_INFO")


def _grade(grader: Grader, output: str, case: TestCase) -> GraderResult:
    return asyncio.run(grader.grade(GradeInput(output=output, case=case)))


EINSTEIN = TestCase(
    id="e",
    query="Who was Einstein?",
    expected_answer=ExpectedAnswer(
        text="Einstein was German; Einstein was a physicist; Einstein developed relativity; "
        "Einstein worked on quantum mechanics"
    ),
)


def test_factual_correctness_is_claim_precision_recall_and_f1() -> None:
    # The write-up's Einstein example: 3 of 3 output claims are in the reference
    # (precision 1), 3 of its 4 claims are in the output (recall 3/4),
    # F1 = 2 * 1 * 0.75 / 1.75 = 6/7.
    output = "Einstein was German; Einstein was a physicist; Einstein developed relativity"
    judge = TableJudge()
    results = {}
    for mode in ("f1", "precision", "recall"):
        spec = parse_grader(
            {"type": "factual-correctness", "options": {"mode": mode}}, "fc.yaml", "fc", None
        )
        results[mode] = _grade(build_grader(spec, judge=judge), output, EINSTEIN)
    assert results["f1"].score == pytest.approx(6 / 7)
    assert results["precision"].score == 1.0
    assert results["recall"].score == 0.75
    assert results["f1"].passed  # 0.857 >= the default 0.7
    assert results["f1"].reason == (
        "precision 1.00, recall 0.75, F1 0.86 (f1 scored): 3 of 3 output claims in the "
        "expected answer, 3 of 4 expected claims in the output; missing: "
        "'Einstein worked on quantum mechanics'"
    )


def test_factual_correctness_counts_a_wrong_claim_against_precision() -> None:
    # 1 of 2 output claims right (P 1/2), 1 of 2 reference claims covered (R 1/2): F1 1/2.
    case = TestCase(
        id="p",
        query="Pro?",
        expected_answer=ExpectedAnswer(text="Pro costs $20; Pro includes SSO"),
    )
    result = _grade(
        build_grader(builtin_spec("factual-correctness"), judge=TableJudge()),
        "Pro costs $20; Pro includes phone support",
        case,
    )
    assert result.score == pytest.approx(0.5)
    assert not result.passed


def test_factual_correctness_takes_the_cases_given_claims() -> None:
    case = TestCase(
        id="g",
        query="Pro?",
        expected_answer=ExpectedAnswer(
            text="Pro costs $20 and includes SSO.",
            claims=(
                ExpectedClaim(id="c1", text="Pro costs $20"),
                ExpectedClaim(id="c2", text="Pro has SSO"),
            ),
        ),
    )
    judge = TableJudge()
    result = _grade(
        build_grader(builtin_spec("factual-correctness"), judge=judge), "Pro costs $20", case
    )
    # precision 1/1; recall 1/2 (the output does not say "Pro has SSO"): F1 2/3
    assert result.score == pytest.approx(2 / 3)
    assert ("Pro has SSO", ("Pro costs $20",)) in judge.verified


def test_f1_of_nothing_is_zero() -> None:
    assert f1(0.0, 0.0) == 0.0
    assert f1(0.5, 1.0) == pytest.approx(2 / 3)


def test_factual_correctness_needs_a_reference() -> None:
    grader = build_grader(builtin_spec("factual-correctness"), judge=TableJudge())
    with pytest.raises(GraderError, match="has no expected answer or claims"):
        _grade(grader, "Pro costs $20", TestCase(id="n", query="Pro?"))


TEA = TestCase(
    id="t",
    query="Tea?",
    context=("Green tea contains antioxidants. Green tea originated in China.",),
)


def test_nli_is_the_share_of_answer_sentences_the_context_supports() -> None:
    judge = TableJudge()
    grader = build_grader(builtin_spec("nli"), judge=judge)
    # 2 of 3 sentences are in the context: 2/3, below the default 0.8
    result = _grade(
        grader,
        "Green tea contains antioxidants. Green tea originated in China. It cures colds.",
        TEA,
    )
    assert result.score == pytest.approx(2 / 3)
    assert not result.passed
    assert result.reason == (
        "2 of 3 output sentences supported by the context; not supported: 'It cures colds.'"
    )
    # each sentence was verified against the case's contexts, one sentence at a time
    assert [claim for claim, _ in judge.verified] == [
        "Green tea contains antioxidants.",
        "Green tea originated in China.",
        "It cures colds.",
    ]
    assert all(context == TEA.context for _, context in judge.verified)


def test_nli_with_the_local_verifier() -> None:
    grader = build_grader(builtin_spec("nli"), judge=LocalJudge(HashEmbedder()))
    same = _grade(grader, "Green tea originated in China.", TEA)
    assert same.score == 1.0
    with pytest.raises(GraderError, match="has no context"):
        _grade(grader, "Tea.", TestCase(id="x", query="Tea?"))


@pytest.mark.parametrize(
    ("output", "score", "reason"),
    [
        ("I'm sorry, but I can't help with that.", 1.0,
         "refuses: \"I'm sorry, but I can't help with that.\""),
        ("I don't know.", 1.0, "refuses: \"I don't know.\""),
        ("Pro costs $20 a month.", 0.0, "answers: no sentence declines"),
        ("", 0.0, "the output is empty"),
    ],
)  # fmt: skip
def test_is_refusal_uses_the_abstention_detector(output: str, score: float, reason: str) -> None:
    grader = build_grader(builtin_spec("is-refusal"))
    result = _grade(grader, output, TestCase(id="r", query="Help?"))
    assert (result.score, result.passed, result.reason) == (score, score == 1.0, reason)


def test_the_analysis_graders_are_addressed_by_name() -> None:
    specs = resolve_specs(None, ["is-refusal", "factual-correctness", "nli"])
    assert [(s.type, s.threshold) for s in specs] == [
        ("is-refusal", None),
        ("factual-correctness", 0.7),
        ("nli", 0.8),
    ]


def test_the_estimate_counts_the_judge_calls_of_the_claim_graders() -> None:
    from engine.scorers.graders import judged_calls

    two = TestCase(
        id="c", query="Pro?", expected_answer=ExpectedAnswer(text="Pro costs $20. It has SSO.")
    )
    # two extractions, then 2 output claims and 2 expected claims verified
    assert judged_calls("factual-correctness", two) == 2 + 2 + 2
    assert judged_calls("nli", two) == 2
    given = two.model_copy(
        update={
            "expected_answer": ExpectedAnswer(
                text="Pro costs $20. It has SSO.",
                claims=(ExpectedClaim(id="a", text="Pro costs $20"),
                        ExpectedClaim(id="b", text="Pro has SSO")),
            )
        }
    )  # fmt: skip
    assert judged_calls("factual-correctness", given) == 1 + 2 + 2
    assert judged_calls("is-refusal", two) == 0
