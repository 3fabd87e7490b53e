"""A g-eval criterion that joins two checks ("mentions the price and cites a source") is
scored one check at a time: an answer that does both passes, one that does one fails, and
each check's result is in the reason. A join the local judge cannot split is refused."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from engine.graders import LocalJudgeRefusal
from engine.graders.local_rubric import compile_rubric, compound_parts, statement_parts
from engine.judges.local.judge import LocalJudge
from engine.lake import read_table
from engine.settings import Paths
from evalhouse.cli import main
from tests.engine.test_judged_graders import WIRES, grade, grader, http_judge
from tests.engine.test_local_judge import HashEmbedder
from tests.loopback_llm import LoopbackLLM, Reply, loopback_llm

__all__ = ["loopback_llm"]

COMPOUND = {"type": "g-eval", "rubric": "mentions the price and cites a source"}
BOTH = "Pro costs $20 a month, the price on acme.com [Source: acme.com/pricing]."
PRICE_ONLY = "Pro costs $20 a month; that is the price."


@pytest.mark.parametrize(
    ("criterion", "parts"),
    [
        ("mentions the price and cites a source", ("mentions the price", "cites a source")),
        ("The answer must mention the fee; is under 50 words",
         ("The answer must mention the fee", "is under 50 words")),
        ("mentions A, and names B and does not mention C",
         ("mentions A", "names B", "does not mention C")),
        # a part that does not stand alone stays with the one before it
        ("mentions salt and pepper and cites a source",
         ("mentions salt and pepper", "cites a source")),
        ("Evaluate the coherence and logical flow of the response.",
         ("Evaluate the coherence and logical flow of the response.",)),
        # joins inside quotes are part of the phrase
        ("mentions \"terms and conditions\" and cites a source",
         ("mentions \"terms and conditions\"", "cites a source")),
    ],
)  # fmt: skip
def test_a_criterion_splits_where_each_part_stands_alone(
    criterion: str, parts: tuple[str, ...]
) -> None:
    assert compound_parts(criterion) == parts


def test_only_a_one_statement_rubric_is_split_for_a_language_model() -> None:
    assert statement_parts("mentions the price and cites a source") == (
        "mentions the price",
        "cites a source",
    )
    written = "Pass if:\n- mentions the price and cites a source"
    assert statement_parts(written) == (written,)


def test_the_local_judge_scores_each_check_and_passes_when_all_pass() -> None:
    g = grader(COMPOUND, LocalJudge(HashEmbedder()))
    both, one = grade(g, BOTH), grade(g, PRICE_ONLY)
    assert (both.passed, both.score) == (True, 1.0)
    assert both.reason == "local judge: 2 of 2 criteria met: 'mentions the price'; 'cites a source'"
    assert (one.passed, one.score) == (False, 0.5)
    assert one.reason == (
        "local judge: 1 of 2 criteria met: 'mentions the price'; not met: 'cites a source'"
    )


def test_a_g_eval_passes_only_when_every_criterion_is_met() -> None:
    rubric = "mentions the price\nmentions the plan\nmentions month\ncites a source"
    g = grader({"type": "g-eval", "rubric": rubric, "threshold": 0.7}, LocalJudge(HashEmbedder()))
    r = grade(g, "The price of the plan is $20 a month.")
    assert (r.score, r.passed) == (0.75, False)  # 3 of 4 is over 0.7, but one check fails


def test_a_join_the_local_judge_cannot_split_is_refused_with_a_fix() -> None:
    raw = {"type": "g-eval", "rubric": "mentions the price and explains the discount"}
    with pytest.raises(LocalJudgeRefusal) as caught:
        grader(raw, LocalJudge(HashEmbedder()))
    message = str(caught.value)
    assert message.startswith(
        "grader 'g' (g.yaml) is a g-eval: the criterion 'mentions the price and explains the "
        "discount' joins two things with 'and' or ';'"
    )
    assert "quote a phrase that is one" in message and "\n" not in message
    quoted = {"type": "g-eval", "rubric": 'mentions "salt and pepper"'}
    assert grade(grader(quoted, LocalJudge(HashEmbedder())), "Salt and pepper.").passed


def test_fail_if_a_compound_fails_only_an_output_that_does_both() -> None:
    criteria = compile_rubric("Fail if:\n- mentions cats and cites a source", "t")
    assert [c.text for c in criteria] == ["not: mentions cats and cites a source"]
    assert criteria[0].check("cats") and not criteria[0].check("cats [1]")


def _criterion_scorer(provider: str, body: dict[str, Any]) -> Reply:
    """A judge that scores the one criterion it is sent, as a careful model would."""
    text = json.dumps(body)
    if "Write 3 to 6 evaluation steps" in text:
        return Reply.json({"steps": ["Read the output", "Check the criterion"]})
    prompt = "\n".join(m["content"] for m in body["messages"] if isinstance(m["content"], str))
    criterion = re.search(r"CRITERION:\n<<<\n(.*?)\n>>>", prompt, re.S)
    output = re.search(r"OUTPUT TO EVALUATE:\n<<<\n(.*?)\n>>>", prompt, re.S)
    assert criterion and output, prompt
    met = {
        "mentions the price": "price" in output.group(1),
        "cites a source": "[Source:" in output.group(1),
    }[criterion.group(1)]
    return Reply.json({"reasoning": f"{criterion.group(1)}: {met}", "score": 5 if met else 1})


def test_an_llm_judge_scores_each_check_on_its_own(loopback_llm: LoopbackLLM) -> None:
    loopback_llm.responder = _criterion_scorer
    g = grader(COMPOUND, http_judge(loopback_llm, WIRES[0]))
    both, one = grade(g, BOTH), grade(g, PRICE_ONLY)
    assert (both.passed, both.score) == (True, 1.0)
    assert (one.passed, one.score) == (False, 0.5)
    assert one.reason == (
        "G-Eval per criterion, each to pass: 'mentions the price': G-Eval 5/5 -> 1.000: "
        "mentions the price: True; 'cites a source': G-Eval 1/5 -> 0.000: cites a source: False"
    )
    # one steps call per criterion, then one score call per criterion and output
    prompts = [r.prompt_text for r in loopback_llm.requests]
    assert sum("Write 3 to 6 evaluation steps" in p for p in prompts) == 2
    assert len(prompts) == 6


def test_a_run_shows_each_check_in_grader_scores(
    home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "project"
    (project / "graders").mkdir(parents=True)
    (project / "graders" / "price-source.yaml").write_text(
        "type: g-eval\nrubric: mentions the price and cites a source\n", encoding="utf-8"
    )
    cases = tmp_path / "cases.jsonl"
    lines = [
        {"id": i, "query": "How much is Pro?", "response": r, "expected_answer": {"text": "$20."}}
        for i, r in (("both", BOTH), ("one", PRICE_ONLY))
    ]
    cases.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    code = main(["run", "--home", str(home.home), "--test-set", str(cases), "--name", "g",
                 "--project", str(project), "--graders", "price-source", "--no-ingest",
                 "--workers", "1"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    run_id = out.strip().splitlines()[-1]
    scores = {
        r["sample_id"]: r for r in read_table(home.lake, "grader_scores", run_id, 1).to_pylist()
    }
    assert (scores["both"]["passed"], scores["both"]["score"]) == (True, 1.0)
    assert (scores["one"]["passed"], scores["one"]["score"]) == (False, 0.5)
    assert "not met: 'cites a source'" in scores["one"]["reason"]
