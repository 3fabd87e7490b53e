"""Each grader type on hand-made outputs."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from engine.embedders.base import EmbedderError, Vectors
from engine.graders import GradeInput, GraderError, GraderResult, build_grader
from engine.graders.base import Grader
from engine.graders.builtin import BuiltinGrader, to_unit
from engine.graders.deterministic import strip_code_fence
from engine.graders.rubric import (
    RUBRIC_SYSTEM_PROMPT,
    RubricVerdict,
    parse_rubric_reply,
    rubric_user_prompt,
)
from engine.graders.semantic import normalise_cosine
from engine.graders.spec import builtin_spec, parse_grader
from engine.judges.base import JudgeError, JudgeResponseError, Usage
from engine.models import ExpectedAnswer, TestCase


def case(expected: str = "The EU AI Act has four risk tiers.", **kw: Any) -> TestCase:
    return TestCase(
        id=kw.pop("id", "q1"),
        query=kw.pop("query", "What is the EU AI Act?"),
        expected_answer=ExpectedAnswer(text=expected),
        **kw,
    )


def grader(raw: dict[str, Any], **bind: Any) -> Grader:
    return build_grader(parse_grader(raw, "g.yaml", "g", None), **bind)


def grade(g: Grader, output: str, c: TestCase | None = None, **values: Any) -> GraderResult:
    return asyncio.run(g.grade(GradeInput(output=output, case=c or case(), values=values)))


# --------------------------------------------------------------------------- exact-match


def test_exact_match_default_strips_and_is_case_sensitive() -> None:
    g = grader({"type": "exact-match"})
    ok = grade(g, "  The EU AI Act has four risk tiers.\n")
    assert (ok.passed, ok.score, ok.reason) == (True, 1.0, "output equals the expected answer")
    bad = grade(g, "the EU AI Act has four risk tiers.")
    assert (bad.passed, bad.score) == (False, 0.0)
    assert bad.reason == (
        "output differs from the expected answer at character 0 (output 34 characters, expected 34)"
    )


def test_exact_match_insensitive_no_strip_and_fixed_value() -> None:
    g = grader({"type": "exact-match", "options": {"case": "insensitive", "strip": False}})
    assert grade(g, "THE EU AI ACT HAS FOUR RISK TIERS.").passed
    assert not grade(g, " the eu ai act has four risk tiers.").passed
    fixed = grader({"type": "exact-match", "options": {"value": "positive"}})
    r = grade(fixed, "positive ")
    assert r.passed and r.reason == "output equals the configured value"
    prefix = grade(fixed, "positively")
    assert prefix.reason == (
        "output differs from the configured value at character 8 (output 10 characters, expected 8)"
    )


def test_exact_match_without_expected_answer_is_an_error() -> None:
    with pytest.raises(GraderError, match="case 'q1' has no expected answer"):
        grade(grader({"type": "exact-match"}), "x", case(expected=""))


# --------------------------------------------------------------------------- contains


def test_contains_all_scores_share_found() -> None:
    g = grader({"type": "contains", "options": {"values": ["four", "risk", "tiers", "2024"]}})
    r = grade(g, "It defines four risk tiers.")
    assert (r.passed, r.score) == (False, 0.75)
    assert r.reason == "found 3 of 4 (all required); missing '2024'"
    full = grade(g, "four risk tiers since 2024")
    assert (full.passed, full.score, full.reason) == (True, 1.0, "found all 4 values")


def test_contains_any_and_case() -> None:
    g = grader({"type": "contains", "options": {"values": ["Acme", "acme.com"], "mode": "any"}})
    r = grade(g, "See ACME for details")
    assert (r.passed, r.score) == (False, 0.0)
    gi = grader(
        {
            "type": "contains",
            "options": {"values": ["Acme", "acme.com"], "mode": "any", "case": "insensitive"},
        }
    )
    r = grade(gi, "See ACME for details")
    assert (r.passed, r.score) == (True, 0.5)
    assert r.reason == "found 1 of 2 (any required); missing 'acme.com'"


# --------------------------------------------------------------------------- regex


def test_regex_must_match() -> None:
    g = grader({"type": "regex", "options": {"pattern": r"\[Source: [^\]]+\]"}})
    r = grade(g, "Four tiers [Source: 'Art. 6'].")
    assert (r.passed, r.score) == (True, 1.0)
    assert r.reason == "matched \"[Source: 'Art. 6']\" at character 11"
    miss = grade(g, "Four tiers.")
    assert (miss.passed, miss.score, miss.reason) == (
        False,
        0.0,
        r"no match for /\[Source: [^\]]+\]/",
    )


def test_regex_must_not_match_and_flags() -> None:
    g = grader(
        {
            "type": "regex",
            "options": {"pattern": r"\b\w+'(t|s|re|ve|ll|d)\b", "must_match": False, "flags": "i"},
        }
    )
    assert grade(g, "The system is not compliant.").passed
    r = grade(g, "The system ISN'T compliant.")
    assert not r.passed
    assert (
        r.reason
        == "matched \"ISN'T\" at character 11, but /\\b\\w+'(t|s|re|ve|ll|d)\\b/ must not match"
    )
    multi = grader({"type": "regex", "options": {"pattern": "^- ", "flags": ["MULTILINE"]}})
    assert grade(multi, "Summary:\n- one\n- two").passed
    assert not grade(
        grader({"type": "regex", "options": {"pattern": "^- "}}), "Summary:\n- one"
    ).passed


# --------------------------------------------------------------------------- json-schema

SCHEMA = {
    "type": "object",
    "required": ["title", "authors"],
    "properties": {
        "title": {"type": "string"},
        "authors": {"type": "array", "items": {"type": "string"}},
    },
}


def test_json_schema_valid_invalid_and_unparsable() -> None:
    g = grader({"type": "json-schema", "options": {"schema": SCHEMA}})
    ok = grade(g, '{"title": "Attention", "authors": ["Vaswani"]}')
    assert (ok.passed, ok.score, ok.reason) == (True, 1.0, "output is valid against the schema")
    bad = grade(g, '{"title": "Attention", "authors": ["Vaswani", 3]}')
    assert (bad.passed, bad.score) == (False, 0.0)
    assert bad.reason == "1 schema violation; at '/authors/1': 3 is not of type 'string'"
    two = grade(g, '{"authors": "Vaswani"}')
    assert two.reason.startswith("2 schema violations; at '/")
    junk = grade(g, "Sure! Here is the JSON: {")
    assert junk.reason == "output is not valid JSON: Expecting value at line 1 column 1"


def test_json_schema_code_fence() -> None:
    fenced = '```json\n{"title": "T", "authors": []}\n```'
    g = grader({"type": "json-schema", "options": {"schema": SCHEMA}})
    assert grade(g, fenced).passed
    strict = grader(
        {"type": "json-schema", "options": {"schema": SCHEMA, "allow_code_fence": False}}
    )
    assert not grade(strict, fenced).passed
    assert strip_code_fence("  ```\n[1]\n```  ") == "[1]"
    assert strip_code_fence("no fence") == "no fence"


# --------------------------------------------------------------------------- semantic


class TableEmbedder:
    """Returns hand-set vectors, so the cosine of each pair is known exactly."""

    name = "table"
    default_threshold = 0.6

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        rows = np.array([self.table[t] for t in texts], dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


class BrokenEmbedder:
    name = "broken"
    default_threshold = 0.6

    def embed(self, texts: Sequence[str]) -> Vectors:
        raise EmbedderError("connection refused")


def test_normalise_cosine_is_the_writeups_formula() -> None:
    assert normalise_cosine(1.0) == 1.0
    assert normalise_cosine(0.0) == 0.5
    assert normalise_cosine(-1.0) == 0.0
    assert normalise_cosine(0.6) == pytest.approx(0.8)
    assert normalise_cosine(1.0000001) == 1.0


def test_semantic_similarity_scores_and_threshold() -> None:
    expected = "The EU AI Act has four risk tiers."
    # cos(a, e) = 0.6 exactly -> (0.6 + 1) / 2 = 0.8; cos(b, e) = 0 -> 0.5
    emb = TableEmbedder({expected: [1, 0], "close": [0.6, 0.8], "far": [0, 1]})
    g = grader({"type": "semantic-similarity"}, embedder=emb)
    close = grade(g, "close")
    assert close.passed and close.score == pytest.approx(0.8)
    assert close.reason == "cosine 0.600 -> similarity 0.800 (at or above threshold 0.8)"
    far = grade(g, "far")
    assert not far.passed and far.score == pytest.approx(0.5)
    assert emb.calls == [["close", expected], ["far", expected]]
    loose = grader({"type": "semantic-similarity", "threshold": 0.5}, embedder=emb)
    assert grade(loose, "far").passed


def test_semantic_similarity_without_reference_or_output_and_failing_embedder() -> None:
    emb = TableEmbedder({})
    g = grader({"type": "semantic-similarity"}, embedder=emb)
    r = grade(g, "anything", case(expected=""))
    assert (r.passed, r.score, r.reason) == (
        False,
        0.0,
        "no reference text to compare the output with",
    )
    assert grade(g, "   ").reason == "the output is empty"
    assert emb.calls == []
    broken = grader({"type": "semantic-similarity"}, embedder=BrokenEmbedder())
    with pytest.raises(GraderError, match="embedder broken failed: connection refused"):
        grade(broken, "text")


# --------------------------------------------------------------------------- llm-rubric


class FakeRubricJudge:
    """Scores by a rule the test controls, and records what it was asked."""

    name = "fake:judge"

    def __init__(self, score: float | Exception) -> None:
        self.score = score
        self.asked: list[tuple[str, str, str, str, tuple[str, ...]]] = []

    async def grade_rubric(
        self, rubric: str, question: str, answer: str, expected: str, context: Sequence[str]
    ) -> RubricVerdict:
        self.asked.append((rubric, question, answer, expected, tuple(context)))
        if isinstance(self.score, Exception):
            raise self.score
        return RubricVerdict(score=self.score, reason="clear", usage=Usage(input_tokens=10))


def test_llm_rubric_pass_is_score_at_or_above_threshold() -> None:
    judge = FakeRubricJudge(0.7)
    g = grader({"type": "llm-rubric", "rubric": "Be helpful."}, judge=judge)
    c = case(context=("ctx one", "ctx two"))
    r = grade(g, "answer", c)
    assert (r.passed, r.score, r.reason, r.usage.input_tokens) == (True, 0.7, "clear", 10)
    assert judge.asked == [
        (
            "Be helpful.",
            "What is the EU AI Act?",
            "answer",
            c.expected_answer.text,
            ("ctx one", "ctx two"),
        )
    ]
    strict = grader({"type": "llm-rubric", "rubric": "x", "threshold": 0.71}, judge=judge)
    assert not grade(strict, "answer").passed


def test_llm_rubric_judge_failure_is_a_grader_error() -> None:
    g = grader({"type": "llm-rubric", "rubric": "x"}, judge=FakeRubricJudge(JudgeError("429")))
    with pytest.raises(GraderError, match="judge fake:judge failed: 429"):
        grade(g, "answer")


def test_rubric_prompt_and_reply_parser() -> None:
    prompt = rubric_user_prompt("Be helpful.", "Q?", "A.", "E.")
    assert prompt.startswith("## Evaluation Task\n\n**Input/Question:**\nQ?\n")
    assert "**Rubric/Criteria:**\nBe helpful.\n" in prompt
    assert "**Expected/Reference Output:**\nE." in prompt
    assert "Context" not in prompt
    assert '"score": 0.0-1.0' in RUBRIC_SYSTEM_PROMPT
    v = parse_rubric_reply('Here: {"pass": true, "score": 0.85, "reason": "good"} done')
    assert (v.score, v.reason) == (0.85, "good")
    for bad in ("I think it passes", '{"score": 1.5}', '{"score": "high"}', "{oops}"):
        with pytest.raises(JudgeResponseError):
            parse_rubric_reply(bad)


# --------------------------------------------------------------------------- built-ins


def builtin(name: str, threshold: float | None = None) -> BuiltinGrader:
    spec = builtin_spec(name)
    if threshold is not None:
        spec = spec.model_copy(update={"threshold": threshold})
    return BuiltinGrader(spec)


def test_to_unit_maps_every_scale() -> None:
    assert to_unit("accuracy", 85.0) == 0.85
    assert to_unit("faithfulness", 1.0) == 0.0
    assert to_unit("faithfulness", 4.0) == 0.75
    assert to_unit("rag", 5.0) == 1.0
    assert to_unit("claim-faithfulness", 0.4) == 0.4
    with pytest.raises(ValueError, match="0 is outside the 1-5 scale of faithfulness"):
        to_unit("faithfulness", 0.0)


@pytest.mark.parametrize(
    ("name", "values", "score", "passed"),
    [
        ("accuracy", {"accuracy": 72.0}, 0.72, True),
        ("completeness", {"completeness": 50.0}, 0.5, False),
        ("attribution", {"attribution": 100.0}, 1.0, True),
        ("faithfulness", {"judge_faithfulness": 4.0}, 0.75, True),
        ("faithfulness", {"judge_faithfulness": 3.0}, 0.5, False),
        ("claim-faithfulness", {"claim_faithfulness": 0.8}, 0.8, True),
        ("claim-faithfulness", {"claim_faithfulness": 0.75}, 0.75, False),
        ("rag", {"rag_overall": 3.4}, 0.6, False),
        ("answer-synthesis", {"judge_faithfulness": 5.0, "judge_completeness": 4.0}, 0.875, True),
        ("answer-synthesis", {"judge_faithfulness": 5.0, "judge_completeness": 3.0}, 0.75, False),
    ],
)
def test_builtin_maps_values(
    name: str, values: dict[str, float], score: float, passed: bool
) -> None:
    r = grade(builtin(name), "irrelevant", **values)
    assert r.score == pytest.approx(score)
    assert r.passed is passed


def test_builtin_reasons_and_missing_values() -> None:
    r = grade(builtin("faithfulness"), "x", judge_faithfulness=4)
    assert r.reason == "judge_faithfulness 4 of 1-5 -> 0.750 (at or above threshold 0.75)"
    s = grade(builtin("answer-synthesis"), "x", judge_faithfulness=5, judge_completeness=3)
    assert s.reason == (
        "judge faithfulness 5/5, completeness 3/5 -> 0.750; not both at or above 0.75"
    )
    with pytest.raises(GraderError) as caught:
        grade(builtin("accuracy"), "x", accuracy=None, error="target timed out")
    assert str(caught.value) == (
        "built-in 'accuracy' needs accuracy, which the sample does not have "
        "(the sample failed: target timed out)"
    )
    with pytest.raises(GraderError, match="outside the 1-5 scale"):
        grade(builtin("rag"), "x", rag_overall=0.0)
    assert builtin("answer-synthesis").needs_values == {"judge_faithfulness", "judge_completeness"}
    assert builtin("rag", threshold=0.5).threshold == 0.5
    assert grade(builtin("rag", threshold=0.5), "x", rag_overall=3.0).passed


def test_every_result_is_in_unit_range() -> None:
    r = grade(builtin("accuracy"), "x", accuracy=100.0)
    assert 0.0 <= r.score <= 1.0 and not math.isnan(r.score)
    with pytest.raises(ValueError):
        GraderResult(passed=True, score=1.2, reason="")
