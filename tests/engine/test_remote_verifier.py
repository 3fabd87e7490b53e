"""The grounding-model verifier (``--verifier openai:MODEL`` / ``ollama:MODEL``) against a
loopback server speaking the OpenAI chat wire format: the MiniCheck prompt, yes/no from the
answer's log-probabilities or its text, retries of an unreadable answer, keys and specs."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from engine.http import RetryPolicy
from engine.verifier.remote import RemoteVerifier, RemoteVerifierError, parse_spec
from tests.loopback_llm import LoopbackLLM, Reply, loopback_llm  # noqa: F401

FAST = RetryPolicy(retries=1, timeout_s=5.0, backoff_s=0.01)


def _with_logprobs(token: str, yes: float, no: float) -> Reply:
    body = {
        "id": "x",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": token},
                "logprobs": {
                    "content": [
                        {
                            "token": token,
                            "logprob": math.log(yes if token == "Yes" else no),
                            "top_logprobs": [
                                {"token": "Yes", "logprob": math.log(yes)},
                                {"token": "No", "logprob": math.log(no)},
                                {"token": " yes", "logprob": math.log(0.01)},
                            ],
                        }
                    ]
                },
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 20, "completion_tokens": 1, "total_tokens": 21},
    }
    return Reply(raw_body=json.dumps(body).encode())


def test_yes_and_no_from_text_and_the_minicheck_prompt(loopback_llm: LoopbackLLM) -> None:  # noqa: F811
    verifier = RemoteVerifier("ollama:bespoke-minicheck", base_url=loopback_llm.url, policy=FAST)
    try:
        # The two calls go out together: answer by the claim, not by arrival order.
        loopback_llm.responder = lambda provider, body: Reply.text(
            "No." if body["messages"][-1]["content"].endswith("Free") else "Yes"
        )
        probs = verifier.predict([("Pro costs $49.", "Pro is $49"), ("Pro costs $49.", "Free")])
    finally:
        verifier.close()
    assert probs.tolist() == [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    prompts = sorted(r.prompt_text for r in loopback_llm.requests)
    assert "Document: Pro costs $49.\nClaim: Free" in prompts[0]
    body = loopback_llm.requests[0].body or {}
    assert body["model"] == "bespoke-minicheck" and body["max_tokens"] == 1
    assert "authorization" not in {k.lower() for k in loopback_llm.requests[0].headers}


def test_probability_from_the_first_tokens_logprobs(
    loopback_llm: LoopbackLLM,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-" + "a1b2c3d4")
    verifier = RemoteVerifier("openai:gpt-4o-mini", base_url=loopback_llm.url, policy=FAST)
    try:
        loopback_llm.script(_with_logprobs("Yes", 0.8, 0.15))
        probs = verifier.predict([("evidence", "claim")])
    finally:
        verifier.close()
    # (0.8 + 0.01 for " yes") / (0.8 + 0.01 + 0.15)
    assert probs[0, 0] == pytest.approx(0.81 / 0.96)
    assert probs[0, 1] == 0.0 and probs[0, 2] == pytest.approx(1 - 0.81 / 0.96)
    assert loopback_llm.requests[0].headers.get("authorization") == "Bearer sk-test-a1b2c3d4"


def test_an_answer_that_is_neither_yes_nor_no_is_retried_then_an_error(
    loopback_llm: LoopbackLLM,  # noqa: F811
) -> None:
    verifier = RemoteVerifier("ollama:m", base_url=loopback_llm.url, policy=FAST)
    try:
        loopback_llm.script(Reply.text("Maybe"), Reply.text("Perhaps"))
        with pytest.raises(RemoteVerifierError, match="not Yes or No"):
            verifier.predict([("e", "c")])
    finally:
        verifier.close()
    assert loopback_llm.count == 2


@pytest.mark.parametrize("spec", ["anthropic:claude", "ollama:", "local", "minicheck"])
def test_unknown_specs_are_refused(spec: str) -> None:
    with pytest.raises(
        ValueError, match="expected rules, crossencoder, openai:MODEL or ollama:MODEL"
    ):
        parse_spec(spec)


def test_the_local_judge_lets_a_verifier_decide_on_the_evidence_the_embedder_finds(
    loopback_llm: LoopbackLLM,  # noqa: F811
) -> None:
    from engine.embedders.local import LocalEmbedder
    from engine.judges.local.judge import LocalJudge

    embedder = LocalEmbedder()
    verifier = RemoteVerifier("ollama:bespoke-minicheck", base_url=loopback_llm.url, policy=FAST)
    judge = LocalJudge(embedder, verifier=verifier)
    context = [
        "Acme Vault stores backups in Frankfurt. Prices start at $12 per user.",
        "Support answers within four hours on business days.",
    ]
    try:
        loopback_llm.script(_with_logprobs("No", 0.1, 0.9))
        verdict = judge.verify("Acme Vault keeps backups in Dublin", context)
    finally:
        verifier.close()
    # P(no) = 0.9 / (0.9 + 0.1 + 0.01 for " yes"), rounded to 4 places
    assert verdict.verdict == "NOT_ENOUGH_INFO"
    assert verdict.confidence == pytest.approx(0.9 / 1.01, abs=1e-4)
    prompt = loopback_llm.requests[0].prompt_text
    assert "Frankfurt" in prompt and "Claim: Acme Vault keeps backups in Dublin" in prompt
    assert "+verifier:ollama:bespoke-minicheck" in judge.prompt_version


def test_a_run_with_a_verifier_records_each_verdicts_confidence(
    loopback_llm: LoopbackLLM,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from engine.lake import read_table
    from evalhouse.cli import main

    monkeypatch.setenv("OLLAMA_BASE_URL", loopback_llm.url)
    loopback_llm.responder = lambda provider, body: Reply.text("Yes")
    case = {
        "id": "q1",
        "domain": "acme.com",
        "query": "Where are backups kept?",
        "response": "Backups are kept in Frankfurt.",
        "expected_answer": {"text": "In Frankfurt."},
        "context": ["Acme Vault stores backups in Frankfurt."],
    }
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(case) + "\n", encoding="utf-8")
    home = tmp_path / "home"
    argv = ["run", "--test-set", str(path), "--name", "v", "--no-ingest", "--home", str(home)]
    assert main([*argv, "--verifier", "ollama:bespoke-minicheck"]) == 0
    run_id = capsys.readouterr().out.strip().splitlines()[-1]
    verdicts = read_table(home / "lake", "verdicts", run_id).to_pylist()
    assert verdicts and all(v["verdict"] == "SUPPORTED" for v in verdicts)
    assert all(v["confidence"] == 1.0 for v in verdicts)
    assert main([*argv, "--verifier", "anthropic:x"]) == 2
    assert "--verifier" in capsys.readouterr().err


def test_a_verdict_below_the_confidence_bar_flags_the_sample(
    loopback_llm: LoopbackLLM,  # noqa: F811
) -> None:
    import asyncio

    from engine.embedders.local import LocalEmbedder
    from engine.judges.local.judge import LocalJudge
    from engine.models import ExpectedAnswer, TestCase
    from engine.scoring.judging import CONFIDENCE_BAR, judge_sample

    case = TestCase(
        id="q1",
        query="Where are backups kept?",
        domain="acme.com",
        expected_answer=ExpectedAnswer(text="In Frankfurt."),
        context=("Acme Vault stores backups in Frankfurt.",),
    )
    verifier = RemoteVerifier("ollama:m", base_url=loopback_llm.url, policy=FAST)
    judge = LocalJudge(LocalEmbedder(), verifier=verifier)
    try:
        loopback_llm.responder = lambda provider, body: _with_logprobs("Yes", 0.52, 0.47)
        unsure = asyncio.run(judge_sample(case, "Backups are kept in Frankfurt.", judge))
    finally:
        verifier.close()
    confidence = unsure.checks[0].verdict.confidence
    assert confidence is not None and confidence < CONFIDENCE_BAR
    assert "low_confidence" in unsure.flags and unsure.judge_faithfulness is not None


def test_a_crossencoder_with_no_model_exported_is_refused_in_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from engine.verifier import model
    from engine.verifier.choice import VerifierSpecError, build_verifier

    monkeypatch.setattr(model, "MODEL_FILE", tmp_path / "absent.onnx")
    with pytest.raises(VerifierSpecError, match=r"verifier model not found.*reinstall evalhouse"):
        build_verifier("crossencoder")
    assert build_verifier("rules") is None and build_verifier(None) is None


@pytest.mark.parametrize(
    ("flags", "faithfulness", "clear"),
    [
        (["abstained"], None, True),  # nothing to judge: no LLM call
        (["empty_response"], None, True),
        (["low_confidence"], 5.0, False),  # a top score, but a claim the model was unsure of
        ([], 5.0, True),
        ([], 3.0, False),
    ],
)
def test_the_cascade_sends_unsure_samples_to_the_llm_and_keeps_no_answers_local(
    flags: list[str], faithfulness: float | None, clear: bool
) -> None:
    from engine.scorers.judge import clear_decision

    class Outcome:
        def result_fields(self) -> dict[str, object]:
            return {
                "judge_faithfulness": faithfulness,
                "judge_completeness": 5.0 if faithfulness is not None else 1.0,
                "flags": flags,
            }

    assert clear_decision(Outcome()) is clear  # type: ignore[arg-type]
