"""The local judge: verdicts, claims with offsets, rubric, determinism; with a deterministic
fake embedder and with the real MiniLM model."""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import importlib.util
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from engine.judges.base import Judge
from engine.judges.local.abstention import detect_abstention
from engine.judges.local.judge import LOCAL_THRESHOLDS, LocalJudge, claim_spans
from engine.judges.local.rules import stem


class HashEmbedder:
    """Deterministic bag-of-stems vectors: cosine tracks word overlap. For tests only."""

    name = "fake:hash"
    default_threshold = 0.6

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> Any:
        self.calls += 1
        out = np.zeros((len(texts), 512), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"[a-z0-9$€%]+", text.lower()):
                h = int(hashlib.md5(stem(word).encode()).hexdigest(), 16)
                out[row, h % 512] += 1.0 if (h >> 9) % 2 else -1.0
            norm = np.linalg.norm(out[row])
            out[row] = out[row] / norm if norm else out[row]
            if not norm:
                out[row, 0] = 1.0
        return out


def real_embedder() -> Any:
    """The shipped MiniLM model (the project's LocalEmbedder once it exists)."""
    from tests.bench.judge_quality import real_embedder as load

    return load()


_REAL: list[Any] = []


@pytest.fixture
def minilm() -> Any:
    if not _REAL:
        _REAL.append(real_embedder())
    return _REAL[0]


CONTEXT = [
    "Acme Cloud offers three plans: Free, Pro and Team. The Pro plan costs $20 per month.",
    "Support is available Monday to Friday. Acme was founded in 2012 by Maria Lopez.",
]


def verdict(judge: LocalJudge, claim: str, context: Sequence[str] = CONTEXT) -> str:
    return asyncio.run(judge.verify_claim(claim, context)).verdict


def test_local_judge_is_a_judge_named_local() -> None:
    judge = LocalJudge(HashEmbedder())
    assert isinstance(judge, Judge)
    assert judge.name == "local"
    assert judge.prompt_version.startswith("local-v2")


def test_verdicts_with_fake_embedder() -> None:
    judge = LocalJudge(HashEmbedder())
    assert verdict(judge, "The Pro plan costs $20 per month.") == "SUPPORTED"
    assert verdict(judge, "The Pro plan costs $25 per month.") == "CONTRADICTED"
    assert verdict(judge, "The Pro plan costs €20 per month.") == "CONTRADICTED"
    assert verdict(judge, "Acme was founded in 2015 by Maria Lopez.") == "CONTRADICTED"
    assert verdict(judge, "Quantum chromodynamics explains gluons.") == "NOT_ENOUGH_INFO"
    assert verdict(judge, "The Pro plan costs $20 per month.", []) == "NOT_ENOUGH_INFO"


def test_contradiction_verdict_names_rule_and_evidence() -> None:
    judge = LocalJudge(HashEmbedder())
    v = asyncio.run(judge.verify_claim("Acme was founded in 2015 by Maria Lopez.", CONTEXT))
    assert v.rule == "date"
    assert "2012" in v.evidence
    assert v.similarity is not None


def test_claims_keep_offsets() -> None:
    response = "Acme has three plans. Pro costs $20, but Team costs more! Is it good?"
    result = asyncio.run(LocalJudge(HashEmbedder()).extract_claims(response))
    assert [c.text for c in result.claims] == [
        "Acme has three plans",
        "Pro costs $20",
        "Team costs more",
    ]
    for claim in result.claims:
        assert claim.start is not None and claim.end is not None
        assert response[claim.start : claim.end] == claim.text
    assert claim_spans("") == []


def test_embeddings_are_memoised() -> None:
    embedder = HashEmbedder()
    judge = LocalJudge(embedder)
    verdict(judge, "The Pro plan costs $20 per month.")
    calls = embedder.calls
    verdict(judge, "The Pro plan costs $20 per month.")
    assert embedder.calls == calls


def test_an_answer_is_checked_for_abstention_once_across_the_metrics(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import engine.judges.local.judge as local

    checked: list[str] = []

    def counting(response: str, embed: Any = None) -> Any:
        checked.append(response)
        return detect_abstention(response, embed)

    monkeypatch.setattr(local, "detect_abstention", counting)
    judge = LocalJudge(HashEmbedder())
    answer, refusal = "The Pro plan costs $20 per month.", "I'm sorry, I can't help with that."
    for text in (answer, refusal, answer, refusal):
        judge.claims(text)
        judge.rubric("How much is Pro?", CONTEXT, text)
        judge.relevance("How much is Pro?", text)
        judge.correctness_score("How much is Pro?", text, "Pro costs $20 a month.")
    assert checked == [answer, refusal]
    assert judge.claims(refusal).claims == () and judge.claims(answer).claims


def test_rubric_separates_grounded_and_hallucinated_answers() -> None:
    judge = LocalJudge(HashEmbedder())
    question = "How much does the Pro plan cost?"
    good = (
        "The Pro plan costs $20 per month, which means it fits a small budget because it is cheap."
    )
    bad = "The Pro plan costs $95 per month. It includes a private jet. Support runs on Sundays."
    g = asyncio.run(judge.score_rubric(question, CONTEXT, good))
    b = asyncio.run(judge.score_rubric(question, CONTEXT, bad))
    assert g.faithfulness.score > b.faithfulness.score
    assert b.faithfulness.score <= 2
    assert "Contradicted" in b.faithfulness.reasoning and "Unsupported" in b.faithfulness.reasoning
    assert b.faithfulness.reasoning.startswith("Local judge")
    empty = asyncio.run(judge.score_rubric(question, CONTEXT, ""))
    assert empty.completeness.score == 1.0


def test_local_judge_is_deterministic() -> None:
    a = asyncio.run(LocalJudge(HashEmbedder()).score_rubric("q?", CONTEXT, "Pro costs $20."))
    b = asyncio.run(LocalJudge(HashEmbedder()).score_rubric("q?", CONTEXT, "Pro costs $20."))
    assert a == b


def test_real_model_verdicts(minilm: Any) -> None:
    judge = LocalJudge(minilm)
    assert judge.thresholds == LOCAL_THRESHOLDS
    ctx = ["Returns are accepted within 30 days of delivery.", "Pets are not allowed in the hotel."]
    assert (
        verdict(judge, "You can return an item up to 30 days after it is delivered.", ctx)
        == "SUPPORTED"
    )
    assert verdict(judge, "Returns are accepted within 60 days of delivery.", ctx) == "CONTRADICTED"
    assert verdict(judge, "Pets are allowed in the hotel.", ctx) == "CONTRADICTED"
    assert verdict(judge, "The hotel has a rooftop bar.", ctx) == "NOT_ENOUGH_INFO"


def test_real_model_reads_a_swapped_name_below_the_threshold(minilm: Any) -> None:
    """Names pull the cosine of "designed by X" vs "designed by Y" under the contradiction
    threshold; the swap is still read (rules-v4)."""
    judge = LocalJudge(minilm)
    ctx = [
        "The library opened in 1998 after a long campaign.",
        "It was designed by Renzo Piano.",
        "Entry is free for residents.",
    ]
    assert verdict(judge, "The library was designed by Zaha Hadid.", ctx) == "CONTRADICTED"
    added = "The library was designed by Renzo Piano together with Norman Foster."
    assert verdict(judge, added, ctx) == "NOT_ENOUGH_INFO"


@pytest.mark.skipif(
    importlib.util.find_spec("engine.embedders.local") is None,
    reason="engine/embedders/local.py (LocalEmbedder) has not landed yet",
)
def test_with_project_local_embedder() -> None:
    module = importlib.import_module("engine.embedders.local")
    judge = LocalJudge(module.LocalEmbedder())
    assert verdict(judge, "The Pro plan costs $25 per month.") == "CONTRADICTED"
    assert verdict(judge, "The Pro plan is $20 a month.") == "SUPPORTED"
