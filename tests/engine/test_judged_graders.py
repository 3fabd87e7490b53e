"""Rubric, G-Eval and the write-up's promptfoo graders, graded by HTTP judges against the
loopback server in each wire format, and by the local judge where it can."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from engine.graders import GradeInput, GraderConfigError, GraderResult, LocalJudgeRefusal
from engine.graders.base import Grader
from engine.graders.local_rubric import compile_rubric, grade_locally
from engine.graders.registry import build_grader
from engine.graders.spec import GraderFileError, parse_grader
from engine.judges.factory import build_judge
from engine.judges.http.anthropic import AnthropicWire
from engine.judges.http.client import WireFormat
from engine.judges.http.judge import HttpJudge
from engine.judges.http.openai_compat import OpenAIWire
from engine.judges.local.judge import LocalJudge
from engine.models import ExpectedAnswer, ExpectedClaim, TestCase
from tests.engine.test_http_judges import make_judge
from tests.engine.test_local_judge import HashEmbedder
from tests.loopback_llm import LoopbackLLM, Reply, loopback_llm

__all__ = ["loopback_llm"]

WIRES: list[WireFormat] = [OpenAIWire("openai"), AnthropicWire(), OpenAIWire("ollama")]
WIRE_IDS = ["openai", "anthropic", "ollama"]

# The write-up's helpfulness rubric (section "2. Helpfulness Judge"), verbatim.
HELPFUL = """Evaluate if the response is helpful, accurate, and addresses the user's question.

Pass if:
- The response directly answers the question
- Information is accurate and relevant
- Response is clear and well-structured

Fail if:
- Response is off-topic or doesn't answer the question
- Contains factual errors
- Is confusing or poorly written
"""

GREEN_TEA = TestCase(
    id="tea",
    query="What are the health benefits of green tea?",
    expected_answer=ExpectedAnswer(
        text="Green tea provides antioxidants that reduce inflammation, improves brain "
        "function through caffeine and L-theanine, and may lower the risk of heart disease."
    ),
    context=(
        "Green tea contains catechins, powerful antioxidants that may reduce inflammation. "
        "Studies suggest it can improve brain function due to caffeine and L-theanine. "
        "Green tea originated in China over 4,000 years ago. "
        "The ideal brewing temperature is 175°F.",
    ),
)
TEA_OUTPUT = (
    "Green tea is rich in antioxidants that fight inflammation. It also boosts brain "
    "function thanks to caffeine. Additionally, green tea aids weight loss by boosting "
    "metabolism."
)


def grader(raw: dict[str, Any], judge: object) -> Grader:
    return build_grader(parse_grader(raw, "g.yaml", "g", None), judge=judge)


def grade(g: Grader, output: str, case: TestCase = GREEN_TEA) -> GraderResult:
    return asyncio.run(g.grade(GradeInput(output=output, case=case)))


def http_judge(server: LoopbackLLM, wire: WireFormat, **kw: Any) -> HttpJudge:
    return make_judge(server, wire, **kw)


# --------------------------------------------------------------------------- llm-rubric


@pytest.mark.parametrize("wire", WIRES, ids=WIRE_IDS)
def test_rubric_file_is_graded_by_every_http_judge(
    loopback_llm: LoopbackLLM, wire: WireFormat, tmp_path: Path
) -> None:
    loopback_llm.script(Reply.json({"pass": True, "score": 0.8, "reason": "answers it"}))
    judge = http_judge(loopback_llm, wire, cache=tmp_path / "cache")
    g = grader({"type": "llm-judge", "rubric": HELPFUL, "config": {"threshold": 0.7}}, judge)
    r = grade(g, TEA_OUTPUT)
    assert (r.passed, r.score, r.reason, r.usage.calls) == (True, 0.8, "answers it", 1)
    sent = loopback_llm.requests[0]
    expected_path = "/v1/messages" if wire.provider == "anthropic" else "/v1/chat/completions"
    assert sent.path == expected_path
    # the write-up's prompt: its system line, the rubric, output, reference and context
    assert "You are an evaluation judge." in sent.prompt_text
    assert "**Rubric/Criteria:**\nEvaluate if the response is helpful" in sent.prompt_text
    assert f"**Output to Evaluate:**\n{TEA_OUTPUT}" in sent.prompt_text
    assert "**Expected/Reference Output:**\nGreen tea provides" in sent.prompt_text
    assert "The ideal brewing temperature" in sent.prompt_text
    # the same question again is answered from the judge cache: no call, no cost
    again = grade(grader({"type": "llm-judge", "rubric": HELPFUL}, judge), TEA_OUTPUT)
    assert (again.score, again.usage.calls, loopback_llm.count) == (0.8, 0, 1)


def test_rubric_reply_out_of_range_is_repaired_once_then_an_error(
    loopback_llm: LoopbackLLM,
) -> None:
    loopback_llm.script(Reply.json({"score": 7}), Reply.json({"score": 0.4, "reason": "weak"}))
    g = grader({"type": "llm-rubric", "rubric": HELPFUL}, http_judge(loopback_llm, WIRES[0]))
    r = grade(g, "Tea is nice.")
    assert (r.passed, r.score, r.usage.calls) == (False, 0.4, 2)
    assert "0.0 to 1.0, got 7" in loopback_llm.requests[1].prompt_text


def test_ollama_base_url_comes_from_the_environment(
    loopback_llm: LoopbackLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_BASE_URL", loopback_llm.url)
    judge = build_judge("ollama:llama3.1", embedder=HashEmbedder(), cache_dir=None, retries=0)
    loopback_llm.script(Reply.json({"pass": False, "score": 0.2, "reason": "off-topic"}))
    r = grade(grader({"type": "llm-rubric", "rubric": HELPFUL}, judge), "Paris.")
    assert (r.passed, r.score) == (False, 0.2)
    assert loopback_llm.requests[0].body is not None
    assert loopback_llm.requests[0].body["model"] == "llama3.1"


# --------------------------------------------------------------------------- g-eval


G_EVAL = {  # the write-up's g-eval-coherence.yaml
    "name": "Coherence (G-Eval)",
    "description": "Chain-of-thought evaluation of output coherence",
    "type": "promptfoo",
    "config": {
        "assertion": "g-eval",
        "threshold": 0.7,
        "rubric": "Evaluate the coherence and logical flow of the response.",
    },
}
STEPS = ["Read the response", "Check that ideas flow logically", "Assign a score 1-5"]


def geval_responder(scores: dict[str, int]) -> Any:
    def answer(provider: str, body: dict[str, Any]) -> Reply:
        text = json.dumps(body)
        if "Write 3 to 6 evaluation steps" in text:
            return Reply.json({"steps": STEPS})
        for needle, score in scores.items():
            if needle in text:
                return Reply.json({"reasoning": f"{needle} read", "score": score})
        raise AssertionError("unexpected prompt")

    return answer


@pytest.mark.parametrize("wire", WIRES[:2], ids=WIRE_IDS[:2])
def test_g_eval_two_steps_hand_computed(
    loopback_llm: LoopbackLLM, wire: WireFormat, tmp_path: Path
) -> None:
    loopback_llm.responder = geval_responder({"Coherent answer": 4, "Jumbled answer": 2})
    judge = http_judge(loopback_llm, wire, cache=tmp_path / "cache")
    g = grader(G_EVAL, judge)

    async def both() -> list[GraderResult]:
        return list(
            await asyncio.gather(
                g.grade(GradeInput(output="Coherent answer.", case=GREEN_TEA)),
                g.grade(GradeInput(output="Jumbled answer.", case=GREEN_TEA)),
            )
        )

    good, bad = asyncio.run(both())
    # 4 of 5 -> (4 - 1) / 4 = 0.75 >= 0.7; 2 of 5 -> 0.25
    assert (good.score, good.passed, bad.score, bad.passed) == (0.75, True, 0.25, False)
    assert good.reason.startswith("G-Eval 4/5 -> 0.750")
    # one steps call for both samples, then one score call each
    prompts = [r.prompt_text for r in loopback_llm.requests]
    assert sum("Write 3 to 6 evaluation steps" in p for p in prompts) == 1
    assert len(prompts) == 3
    assert all("1. Read the response\n2. Check that ideas" in p for p in prompts[1:])
    # a new run with the same rubric takes the steps (and scores) from the judge cache
    again = grade(grader(G_EVAL, judge), "Coherent answer.")
    assert (again.score, loopback_llm.count) == (0.75, 3)


def test_g_eval_with_given_steps_makes_no_steps_call(loopback_llm: LoopbackLLM) -> None:
    loopback_llm.responder = geval_responder({"Fine": 5})
    raw = {"type": "g-eval", "rubric": "Coherence.", "options": {"steps": ["Read it", "Score"]}}
    r = grade(grader(raw, http_judge(loopback_llm, WIRES[0])), "Fine.")
    assert (r.score, loopback_llm.count) == (1.0, 1)
    assert "1. Read it\n2. Score" in loopback_llm.requests[0].prompt_text


# --------------------------------------------------------------------------- promptfoo types


def write_up_file(assertion: str, threshold: float) -> dict[str, Any]:
    return {
        "name": assertion,
        "type": "promptfoo",
        "config": {"assertion": assertion, "threshold": threshold},
        "inspiration": "RAGAS framework (Es et al., 2023)",
        "reference": "https://arxiv.org/abs/2309.15217",
    }


def test_promptfoo_files_become_native_types() -> None:
    for assertion, kind in [
        ("factuality", "factuality"),
        ("context-recall", "context-recall"),
        ("context-relevance", "context-relevance"),
        ("answer-relevance", "answer-relevance"),
        ("context-faithfulness", "claim-faithfulness"),
    ]:
        spec = parse_grader(write_up_file(assertion, 0.7), "f.yaml", "f", None)
        assert (spec.type, spec.threshold) == (kind, 0.7)
    rubric = {"type": "promptfoo", "config": {"assertion": "llm-rubric", "value": "Be kind."}}
    spec = parse_grader(rubric, "r.yaml", "r", None)
    assert spec.type == "llm-rubric" and spec.options.rubric == "Be kind."  # type: ignore[union-attr]
    with pytest.raises(GraderFileError) as caught:
        parse_grader(write_up_file("toxicity", 0.5), "t.yaml", "t", None)
    assert str(caught.value).startswith(
        "t.yaml: field 'options.assertion': unknown assertion 'toxicity' (known: "
    )
    with pytest.raises(GraderFileError, match=r"'options\.assertion': is required"):
        parse_grader({"type": "promptfoo"}, "n.yaml", "n", None)


@pytest.mark.parametrize("wire", WIRES[:2], ids=WIRE_IDS[:2])
def test_factuality_categories(loopback_llm: LoopbackLLM, wire: WireFormat) -> None:
    loopback_llm.script(
        Reply.json({"category": "(D)", "reason": "claims weight loss"}),
        Reply.json({"category": "A", "reason": "subset"}),
    )
    g = grader(write_up_file("factuality", 0.7), http_judge(loopback_llm, wire))
    bad, good = grade(g, TEA_OUTPUT), grade(g, "Green tea has antioxidants.")
    assert (bad.score, bad.passed, bad.reason) == (0.0, False, "category D: claims weight loss")
    assert (good.score, good.passed) == (1.0, True)
    assert "[Expert]: Green tea provides antioxidants" in loopback_llm.requests[0].prompt_text


@pytest.mark.parametrize("wire", WIRES[:2], ids=WIRE_IDS[:2])
def test_context_recall_and_relevance_follow_the_write_up(
    loopback_llm: LoopbackLLM, wire: WireFormat
) -> None:
    # The write-up's worked example: 2 of 3 expected claims in the context (0.67, fails
    # 0.7); 2 of 4 context sentences relevant (0.5).
    claims = [
        "Green tea provides antioxidants that reduce inflammation",
        "Green tea improves brain function through caffeine and L-theanine",
        "Green tea may lower the risk of heart disease",
    ]

    def answer(provider: str, body: dict[str, Any]) -> Reply:
        text = json.dumps(body)
        if "CONTEXT SENTENCES" in text:
            return Reply.json({"relevant": [1, 2], "reason": "history and brewing are not"})
        if "atomic factual claims" in text:
            return Reply.json({"claims": claims})
        verdict = "NOT_ENOUGH_INFO" if "heart disease" in text else "SUPPORTED"
        return Reply.json({"verdict": verdict, "evidence": "x"})

    loopback_llm.responder = answer
    judge = http_judge(loopback_llm, wire)
    recall = grade(grader(write_up_file("context-recall", 0.7), judge), TEA_OUTPUT)
    assert recall.score == pytest.approx(2 / 3) and not recall.passed
    assert recall.reason.endswith("not found: 'Green tea may lower the risk of heart disease'")
    assert recall.usage.calls == 4  # 1 extraction + 3 verifications
    relevance = grade(grader(write_up_file("context-relevance", 0.7), judge), TEA_OUTPUT)
    assert (relevance.score, relevance.passed, relevance.usage.calls) == (0.5, False, 1)
    assert "[4] The ideal brewing temperature is 175°F." in loopback_llm.requests[-1].prompt_text


def test_answer_relevance_maps_one_to_five(loopback_llm: LoopbackLLM) -> None:
    loopback_llm.script(Reply.json({"score": 4, "reasoning": "on topic"}))
    g = grader(write_up_file("answer-relevance", 0.8), http_judge(loopback_llm, WIRES[1]))
    r = grade(g, TEA_OUTPUT)
    assert (r.score, r.passed, r.reason) == (0.75, False, "relevance 4/5 -> 0.750: on topic")


def test_context_recall_uses_given_claims_with_the_local_judge() -> None:
    case = GREEN_TEA.model_copy(
        update={
            "expected_answer": ExpectedAnswer(
                text="",
                claims=(
                    ExpectedClaim(id="c1", text="Green tea contains catechins."),
                    ExpectedClaim(id="c2", text="Green tea costs 5 dollars per cup."),
                ),
            )
        }
    )
    g = grader(write_up_file("context-recall", 0.7), LocalJudge(HashEmbedder()))
    r = grade(g, "anything", case)
    assert r.score == 0.5 and r.usage.calls == 0
    assert "not found: 'Green tea costs 5 dollars per cup.'" in r.reason


def test_local_factuality_reads_a_contradiction_as_d() -> None:
    case = TestCase(
        id="p",
        query="How much is Pro?",
        expected_answer=ExpectedAnswer(text="The Pro plan costs $20 per month."),
    )
    g = grader(write_up_file("factuality", 0.7), LocalJudge(HashEmbedder()))
    assert grade(g, "The Pro plan costs $20 per month.", case).score == 1.0
    wrong = grade(g, "The Pro plan costs $45 per month.", case)
    assert wrong.score == 0.0 and wrong.reason.startswith("category D")


def test_local_judge_refuses_context_relevance_before_any_call() -> None:
    with pytest.raises(LocalJudgeRefusal, match="cannot tell whether a context sentence"):
        grader(write_up_file("context-relevance", 0.7), LocalJudge(HashEmbedder()))


def test_judged_graders_need_a_judge() -> None:
    with pytest.raises(GraderConfigError, match="needs a judge"):
        grader(write_up_file("factuality", 0.7), None)


# --------------------------------------------------------------------------- local rubrics


def test_local_judge_checks_criteria_it_can_read() -> None:
    rubric = """Pass if:
- The response mentions "catechins" and "caffeine"
- Response is under 20 words
- It cites a source
Fail if:
- The output mentions weight loss
"""
    g = grader({"type": "llm-rubric", "rubric": rubric}, LocalJudge(HashEmbedder()))
    good = grade(g, "Green tea has catechins and caffeine [Source: tea.org].")
    assert (good.score, good.passed) == (1.0, True)
    assert good.reason == (
        'local judge: 4 of 4 criteria met: \'The response mentions "catechins" and "caffeine"\'; '
        "'Response is under 20 words'; 'It cites a source'; 'not: The output mentions weight loss'"
    )
    bad = grade(g, TEA_OUTPUT)  # 23 words, no catechins, no source, mentions weight loss
    assert bad.score == 0.0
    assert bad.reason == (
        'local judge: 0 of 4 criteria met; not met: \'The response mentions "catechins" and '
        "\"caffeine\"'; 'Response is under 20 words'; 'It cites a source'; "
        "'not: The output mentions weight loss'"
    )


def test_word_limits_by_hand() -> None:
    five = "one two three four five"
    for criterion, output, met in [
        ("under 5 words", five, False),
        ("at most 5 words", five, True),
        ("at least 5 words", five, True),
        ("more than 5 words", five, False),
        ("is valid JSON", '```json\n{"a": 1}\n```', True),
        ("does not mention 'price'", "The Price is right", False),
    ]:
        criteria = compile_rubric(criterion, "t")
        assert grade_locally(criteria, output)[0] == (1.0 if met else 0.0), criterion


def test_local_judge_names_the_criterion_it_cannot_check() -> None:
    with pytest.raises(LocalJudgeRefusal) as caught:
        grader({"type": "llm-judge", "rubric": HELPFUL}, LocalJudge(HashEmbedder()))
    message = str(caught.value)
    assert message.startswith("grader 'g' (g.yaml) is an llm-rubric: its rubric must be read")
    assert (
        "cannot check the criterion 'Evaluate if the response is helpful, accurate, and "
        "addresses the user's question.'" in message
    )
    assert "--judge openai:MODEL" in message
    with pytest.raises(LocalJudgeRefusal, match="'Check the logical flow'"):
        raw = {"type": "g-eval", "rubric": "mentions tea"}
        grader(
            {**raw, "options": {"steps": ["Check the logical flow"]}}, LocalJudge(HashEmbedder())
        )


# --------------------------------------------------------------------------- estimates


def test_judged_calls_per_answer() -> None:
    # engine.scorers imported first is a cycle (engine.run imports it back): go through run
    import engine.run  # noqa: F401
    from engine.scorers.graders import judged_calls

    assert judged_calls("g-eval", GREEN_TEA) == 1
    assert judged_calls("context-relevance", GREEN_TEA) == 1
    # 1 extraction + one verification per sentence of the expected answer (1 sentence)
    assert judged_calls("context-recall", GREEN_TEA) == 2
    assert judged_calls("regex", GREEN_TEA) == 0


# --------------------------------------------------------------------------- end to end


def test_rubric_and_promptfoo_files_in_a_local_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine.lake import read_table
    from engine.settings import resolve_paths
    from evalhouse.cli import main

    monkeypatch.setenv("EVALHOUSE_HOME", str(tmp_path / "home"))
    graders = tmp_path / "project" / "graders"
    graders.mkdir(parents=True)
    (graders / "short.yaml").write_text(
        "name: Short and sourced\ntype: llm-judge\nrubric: |\n  Pass if:\n"
        "  - The response mentions 'catechins'\n  - Response is under 12 words\n",
        encoding="utf-8",
    )
    (graders / "recall.yaml").write_text(
        yaml_text(write_up_file("context-recall", 0.7)), encoding="utf-8"
    )
    case = GREEN_TEA.model_dump(mode="json", exclude_none=True)
    case["response"] = "Green tea contains catechins, powerful antioxidants."
    case["expected_answer"]["claims"] = [
        {"id": "c1", "text": "Green tea contains catechins."},
        # A claim the local judge can tell is missing: it checks numbers, dates and names
        # (it would call a same-topic claim without them, "cures colds", supported).
        {"id": "c2", "text": "Green tea costs 5 dollars per cup."},
    ]
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps(case) + "\n", encoding="utf-8")
    home = resolve_paths(tmp_path / "home")
    code = main(
        ["run", "--home", str(home.home), "--no-ingest", "--test-set", str(cases), "--name",
         "graded", "--project", str(tmp_path / "project"), "--graders", "short,recall"]
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    run_id = out.strip().splitlines()[-1]
    rows = {r["grader"]: r for r in read_table(home.lake, "grader_scores", run_id).to_pylist()}
    # 7 words, mentions catechins: both criteria met
    assert (rows["short"]["score"], rows["short"]["passed"]) == (1.0, True)
    assert (rows["recall"]["score"], rows["recall"]["passed"]) == (0.5, False)
    assert rows["recall"]["reason"].endswith("not found: 'Green tea costs 5 dollars per cup.'")


def yaml_text(data: dict[str, Any]) -> str:
    return "".join(f"{k}: {json.dumps(v)}\n" for k, v in data.items())


def test_context_recall_verifies_all_expected_claims_in_one_batched_call(
    loopback_llm: LoopbackLLM,
) -> None:
    # The same worked example as above with the judge batching (judge_calls=batched): the
    # three expected claims go in one verification call and score the same 2 of 3.
    claims = [
        "Green tea provides antioxidants that reduce inflammation",
        "Green tea improves brain function through caffeine and L-theanine",
        "Green tea may lower the risk of heart disease",
    ]

    def answer(provider: str, body: dict[str, Any]) -> Reply:
        text = json.dumps(body)
        if "atomic factual claims" in text:
            return Reply.json({"claims": claims})
        assert "whether claims are supported" in text  # never one call per claim
        return Reply.json(
            {
                "verdicts": [
                    {"claim": 1, "verdict": "SUPPORTED", "passages": [1]},
                    {"claim": 2, "verdict": "SUPPORTED", "passages": [1]},
                    {"claim": 3, "verdict": "NOT_ENOUGH_INFO", "passages": []},
                ]
            }
        )

    loopback_llm.responder = answer
    judge = HttpJudge(http_judge(loopback_llm, WIRES[0]).client, batch_claims=True)
    recall = grade(grader(write_up_file("context-recall", 0.7), judge), TEA_OUTPUT)
    assert recall.score == pytest.approx(2 / 3) and not recall.passed
    assert recall.reason.endswith("not found: 'Green tea may lower the risk of heart disease'")
    assert recall.usage.calls == loopback_llm.count == 2  # 1 extraction + 1 verification
    import engine.run  # noqa: F401  (engine.scorers first is an import cycle)
    from engine.scorers.graders import judged_calls

    assert judged_calls("context-recall", GREEN_TEA, batched=True) == 2
