"""Text-overlap graders against hand-computed values and the reference libraries."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest
from rouge_score import rouge_scorer  # dev dependency: the reference ROUGE implementation

from engine.graders import GradeInput, build_grader
from engine.graders.base import Grader
from engine.graders.overlap import lcs_length, rouge_l
from engine.graders.spec import GraderFileError, parse_grader
from engine.models import ExpectedAnswer, TestCase


def grade(raw: dict[str, Any], output: str, expected: str) -> Any:
    g: Grader = build_grader(parse_grader(raw, "g.yaml", "g", None))
    case = TestCase(id="q", query="q?", expected_answer=ExpectedAnswer(text=expected))
    return asyncio.run(g.grade(GradeInput(output=output, case=case)))


def test_rouge_l_lin_2004_examples() -> None:
    # Lin (2004), section 3.1: reference "police killed the gunman".
    # "police kill the gunman": LCS police-the-gunman = 3 of 4 words each way.
    assert rouge_l("police kill the gunman", "police killed the gunman") == (0.75, 0.75, 0.75)
    # "the gunman kill police": LCS the-gunman = 2, so 0.5 each way.
    assert rouge_l("the gunman kill police", "police killed the gunman") == (0.5, 0.5, 0.5)
    assert lcs_length(list("ABCBDAB"), list("BDCABA")) == 4  # CLRS's textbook example


PAIRS = [
    ("The cat sat on the mat.", "A cat was sitting on the mat"),
    ("Acme Vault costs $12 per user per month.", "It costs 12 dollars per user each month."),
    ("", "nothing here"),
    ("Refunds within 30 days, no questions asked!", "You can get a refund within 30 days."),
    ("Denver HQ; founded 2014", "Acme Cloud was founded in 2014 and is based in Denver."),
    ("the the the", "the cat"),
]


@pytest.mark.parametrize(("output", "reference"), PAIRS)
def test_rouge_l_matches_rouge_score(output: str, reference: str) -> None:
    expected = rouge_scorer.RougeScorer(["rougeL"]).score(reference, output)["rougeL"]
    p, r, f = rouge_l(output, reference)
    assert math.isclose(p, expected.precision)
    assert math.isclose(r, expected.recall)
    assert math.isclose(f, expected.fmeasure)


def test_bleu_hand_computed() -> None:
    # "the cat sat on a mat today" vs "the cat sat on the mat": clipped n-gram precisions
    # 5/7, 3/6, 2/5, 1/4; the output is longer so BP = 1; BLEU = (5/7*1/2*2/5*1/4)^(1/4).
    result = grade({"type": "bleu"}, "the cat sat on a mat today", "the cat sat on the mat")
    assert math.isclose(result.score, (1 / 28) ** 0.25, rel_tol=1e-9)
    assert not result.passed  # default threshold 0.5


def test_chrf_hand_computed() -> None:
    # chrF, beta 2, characters without spaces. "ab" vs "abc": unigrams P 1, R 2/3;
    # bigrams P 1, R 1/2; no longer n-grams in the output, so the average runs over
    # orders 1-2: P 1, R 7/12, F = 5PR / (4P + R) = 35/55.
    result = grade({"type": "chrf"}, "ab", "abc")
    assert math.isclose(result.score, 35 / 55, rel_tol=1e-9)
    # char_order 1 alone: F = 5 * 2/3 / (4 + 2/3) = 10/14
    result = grade({"type": "chrf", "options": {"char_order": 1}}, "ab", "abc")
    assert math.isclose(result.score, 10 / 14, rel_tol=1e-9)


def test_levenshtein_kitten_sitting() -> None:
    # The write-up's example: levenshtein("kitten", "sitting") = 3; 1 - 3/7.
    result = grade({"type": "levenshtein"}, "kitten", "sitting")
    assert math.isclose(result.score, 4 / 7)
    assert "3 edits" in result.reason and not result.passed
    same = grade({"type": "levenshtein", "options": {"case": "insensitive"}}, "Kitten", "kitten")
    assert same.score == 1.0 and same.passed


def test_rouge_l_grader_measure_threshold_and_value() -> None:
    raw = {"type": "rouge-l", "threshold": 0.7, "options": {"measure": "recall"}}
    result = grade(raw, "police kill the gunman today", "police killed the gunman")
    assert result.score == 0.75 and result.passed
    fixed = {"type": "rougeL", "options": {"value": "police killed the gunman"}}
    assert grade(fixed, "police killed the gunman", "ignored").score == 1.0


def test_no_reference_fails_with_reason() -> None:
    result = grade({"type": "bleu"}, "anything", "  ")
    assert not result.passed and result.score == 0.0 and "no reference" in result.reason


def test_bad_options_are_refused_with_field() -> None:
    with pytest.raises(GraderFileError) as err:
        parse_grader({"type": "chrf", "options": {"char_order": 0}}, "g.yaml", "g", None)
    assert "char_order" in str(err.value)
    with pytest.raises(GraderFileError) as err:
        parse_grader({"type": "bleu", "options": {"smoothing": "exp"}}, "g.yaml", "g", None)
    assert "smoothing" in str(err.value)
