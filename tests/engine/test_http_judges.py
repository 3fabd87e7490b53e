"""OpenAI-compatible and Anthropic judges against the loopback server: wire format, retries,
Retry-After, timeouts, repair, verdict normalisation, concurrency, cost, and key hygiene."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.judges.base import JudgeError, JudgeResponseError
from engine.judges.factory import build_judge
from engine.judges.http.anthropic import AnthropicWire
from engine.judges.http.cache import JudgeCache
from engine.judges.http.client import HttpJudgeClient, WireFormat
from engine.judges.http.judge import HttpJudge
from engine.judges.http.openai_compat import OpenAIWire
from engine.judges.http.prompt import load_prompt
from engine.pricing import PriceTable
from tests.engine.test_local_judge import HashEmbedder
from tests.loopback_llm import LoopbackLLM, Reply, loopback_llm

__all__ = ["loopback_llm"]

RUBRIC = {
    "faithfulness": {"score": 5, "reasoning": "grounded"},
    "completeness": {"score": 4, "reasoning": "explains"},
}


def make_judge(
    server: LoopbackLLM,
    wire: WireFormat | None = None,
    *,
    cache: Path | None = None,
    **kw: Any,
) -> HttpJudge:
    options: dict[str, Any] = {"timeout": 2.0, "max_retries": 3, "backoff_base": 0.01}
    options.update(kw)
    client = HttpJudgeClient(
        wire or OpenAIWire(),
        model=options.pop("model", "gpt-4o-mini"),
        base_url=server.url,
        api_key=options.pop("api_key", "sk-test"),
        cache=JudgeCache(cache) if cache else None,
        **options,
    )
    return HttpJudge(client)


def test_openai_wire_format(loopback_llm: LoopbackLLM) -> None:
    loopback_llm.script(Reply.json({"verdict": "SUPPORTED", "evidence": "Pro is $20"}))
    judge = make_judge(loopback_llm)
    v = asyncio.run(judge.verify_claim("Pro costs $20", ["Pro is $20 a month."]))
    assert v.verdict == "SUPPORTED" and v.evidence == "Pro is $20"
    request = loopback_llm.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.body is not None
    assert request.body["response_format"] == {"type": "json_object"}
    assert request.body["messages"][0]["role"] == "system"
    assert "Pro costs $20" in request.prompt_text and "Pro is $20 a month." in request.prompt_text
    assert judge.name == "openai:gpt-4o-mini"
    assert judge.prompt_version.startswith("v1-")


def test_anthropic_wire_format(loopback_llm: LoopbackLLM) -> None:
    loopback_llm.script(Reply.json(RUBRIC, input_tokens=1000, output_tokens=100))
    judge = make_judge(loopback_llm, AnthropicWire(), model="claude-3-5-haiku-20241022")
    result = asyncio.run(judge.score_rubric("q?", ["ctx"], "answer"))
    assert result.faithfulness.score == 5 and result.completeness.score == 4
    request = loopback_llm.requests[0]
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == "sk-test"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.body is not None and isinstance(request.body["system"], str)
    assert request.body["max_tokens"] > 0
    # claude-3-5-haiku: $0.80 in / $4 out per million tokens
    assert result.usage.cost_usd == pytest.approx((1000 * 0.8 + 100 * 4.0) / 1e6)
    assert judge.name == "anthropic:claude-3-5-haiku-20241022"


def test_retry_after_is_honoured(loopback_llm: LoopbackLLM) -> None:
    loopback_llm.script(Reply.rate_limited(retry_after=0.4), Reply.json(RUBRIC))
    judge = make_judge(loopback_llm)
    start = time.perf_counter()
    asyncio.run(judge.score_rubric("q?", ["c"], "a"))
    assert time.perf_counter() - start >= 0.4
    assert loopback_llm.count == 2


def test_server_errors_and_malformed_bodies_are_retried(loopback_llm: LoopbackLLM) -> None:
    loopback_llm.script(
        Reply.server_error(500), Reply.server_error(503), Reply.malformed(), Reply.json(RUBRIC)
    )
    judge = make_judge(loopback_llm)
    result = asyncio.run(judge.score_rubric("q?", ["c"], "a"))
    assert result.faithfulness.score == 5
    assert loopback_llm.count == 4


def test_gives_up_after_max_retries(loopback_llm: LoopbackLLM) -> None:
    loopback_llm.script(*[Reply.server_error(500)] * 3)
    judge = make_judge(loopback_llm, max_retries=2)
    with pytest.raises(JudgeError, match="HTTP 500"):
        asyncio.run(judge.score_rubric("q?", ["c"], "a"))
    assert loopback_llm.count == 3


def test_timeout_is_retried(loopback_llm: LoopbackLLM) -> None:
    loopback_llm.script(Reply.slow(3.0, json.dumps(RUBRIC)), Reply.json(RUBRIC))
    judge = make_judge(loopback_llm, timeout=0.3)
    start = time.perf_counter()
    result = asyncio.run(judge.score_rubric("q?", ["c"], "a"))
    assert result.completeness.score == 4
    assert time.perf_counter() - start < 2.5


def test_client_errors_are_not_retried(loopback_llm: LoopbackLLM) -> None:
    loopback_llm.script(Reply(status=401, raw_body=b'{"error": "bad key sk-test"}'))
    judge = make_judge(loopback_llm)
    with pytest.raises(JudgeError, match="HTTP 401") as info:
        asyncio.run(judge.score_rubric("q?", ["c"], "a"))
    assert "sk-test" not in str(info.value)
    assert loopback_llm.count == 1


def test_prose_is_repaired_once(loopback_llm: LoopbackLLM) -> None:
    loopback_llm.script(Reply.text("Sure! The answer looks faithful to me."), Reply.json(RUBRIC))
    judge = make_judge(loopback_llm)
    result = asyncio.run(judge.score_rubric("q?", ["c"], "a"))
    assert result.faithfulness.score == 5
    assert result.usage.calls == 2
    repair = loopback_llm.requests[1]
    assert "could not be used" in repair.prompt_text
    assert repair.body is not None and repair.body["messages"][-2]["role"] == "assistant"


def test_second_unusable_reply_raises_without_guessing(loopback_llm: LoopbackLLM) -> None:
    loopback_llm.script(Reply.text("I think it is fine."), Reply.text("Still prose."))
    judge = make_judge(loopback_llm)
    with pytest.raises(JudgeResponseError):
        asyncio.run(judge.score_rubric("q?", ["c"], "a"))
    assert loopback_llm.count == 2


def test_verdicts_are_normalised_or_rejected(loopback_llm: LoopbackLLM) -> None:
    loopback_llm.script(
        Reply.json({"verdict": "not enough info", "evidence": ""}),
        Reply.json({"verdict": "contradicted", "evidence": "x"}),
        Reply.json({"verdict": "MAYBE"}),
        Reply.json({"verdict": "PARTIALLY"}),
    )
    judge = make_judge(loopback_llm)
    assert asyncio.run(judge.verify_claim("c", ["x"])).verdict == "NOT_ENOUGH_INFO"
    assert asyncio.run(judge.verify_claim("c", ["x"])).verdict == "CONTRADICTED"
    with pytest.raises(JudgeResponseError, match="invalid verdict"):
        asyncio.run(judge.verify_claim("c", ["x"]))


def test_scores_out_of_range_are_rejected(loopback_llm: LoopbackLLM) -> None:
    loopback_llm.script(Reply.json({"score": 7}), Reply.json({"score": "high"}))
    with pytest.raises(JudgeResponseError, match="score"):
        asyncio.run(make_judge(loopback_llm).score_relevance("q", "a"))


def test_claims_extraction_keeps_verbatim_offsets(loopback_llm: LoopbackLLM) -> None:
    response = "Pro costs $20. It has 100 GB."
    loopback_llm.script(Reply.json({"claims": ["Pro costs $20", "The Pro plan has 100 GB"]}))
    result = asyncio.run(make_judge(loopback_llm).extract_claims(response))
    first, second = result.claims
    assert response[first.start : first.end] == "Pro costs $20"  # type: ignore[index]
    assert second.start is None


def test_concurrency_limit(loopback_llm: LoopbackLLM) -> None:
    loopback_llm.delay = 0.15
    loopback_llm.responder = lambda provider, body: json.dumps({"score": 4, "reasoning": "ok"})
    judge = make_judge(loopback_llm, concurrency=2)

    async def many() -> None:
        await asyncio.gather(*(judge.score_relevance(f"q{i}", "a") for i in range(6)))

    asyncio.run(many())
    assert loopback_llm.count == 6
    assert loopback_llm.max_in_flight == 2


def test_costs_add_up(loopback_llm: LoopbackLLM) -> None:
    loopback_llm.responder = lambda provider, body: Reply(
        content=json.dumps({"score": 3, "reasoning": "ok"}), input_tokens=2000, output_tokens=500
    )
    judge = make_judge(
        loopback_llm, prices=PriceTable({"gpt-4o-mini": {"input": 1.0, "output": 2.0}})
    )
    results = [asyncio.run(judge.score_relevance(f"q{i}", "a")) for i in range(3)]
    total = results[0].usage + results[1].usage + results[2].usage
    assert total.calls == 3
    assert total.input_tokens == 6000 and total.output_tokens == 1500
    assert total.cost_usd == pytest.approx(3 * (2000 * 1.0 + 500 * 2.0) / 1e6)


def test_prompts_are_versioned_files() -> None:
    prompt = load_prompt("verify_claim")
    assert prompt.id == "verify_claim.v1"
    _, user = prompt.render(claim="{{context}}", context="CTX")
    assert "{{context}}" in user and "CTX" in user  # values are not re-scanned


def test_factory_builds_every_spec(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-y")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    embedder = HashEmbedder()
    assert build_judge("local", embedder=embedder, cache_dir=None).name == "local"
    openai = build_judge("openai:gpt-4o", embedder=embedder, cache_dir=tmp_path)
    assert openai.name == "openai:gpt-4o"
    assert isinstance(openai, HttpJudge) and openai.client.base_url == "https://api.openai.com"
    ollama = build_judge("ollama:llama3.1", embedder=embedder, cache_dir=None)
    assert isinstance(ollama, HttpJudge) and ollama.client.base_url == "http://127.0.0.1:11434"
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    claude = build_judge("anthropic:claude-sonnet-4", embedder=embedder, cache_dir=None)
    assert isinstance(claude, HttpJudge) and claude.client.base_url == "http://127.0.0.1:9"
    with pytest.raises(JudgeError):
        build_judge("gemini:pro", embedder=embedder, cache_dir=None)
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(JudgeError, match="OPENAI_API_KEY"):
        build_judge("openai:gpt-4o", embedder=embedder, cache_dir=None)


@pytest.fixture
def planted_key(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    key = "sk-PLANTED-7f3a9c1e5b2d4680"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    yield key


def test_planted_key_never_reaches_cache_or_logs(
    loopback_llm: LoopbackLLM,
    planted_key: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    cache_dir = tmp_path / "cache"
    for spec in ("openai:gpt-4o-mini", "anthropic:claude-haiku-4-5"):
        judge = build_judge(
            spec, embedder=HashEmbedder(), cache_dir=cache_dir, base_url=loopback_llm.url
        )
        assert isinstance(judge, HttpJudge)
        judge.client.backoff_base = 0.01
        loopback_llm.script(
            Reply.rate_limited(0.01),
            Reply.text(f"prose that echoes {planted_key}"),
            Reply.json(RUBRIC),
            Reply(status=403, raw_body=json.dumps({"error": f"key {planted_key} denied"}).encode()),
        )
        asyncio.run(judge.score_rubric("q?", ["c"], "a"))
        with pytest.raises(JudgeError) as info:
            asyncio.run(judge.score_relevance("q", "a"))
        assert planted_key not in str(info.value)
        assert planted_key not in repr(judge.client)
        # the key was really sent, in a header
        sent = loopback_llm.requests[-1].headers
        assert planted_key in (sent.get("authorization", "") + sent.get("x-api-key", ""))
    JudgeCache(cache_dir).flush()  # entries are written by a background thread
    files = [p for p in cache_dir.rglob("*") if p.is_file()]
    assert files, "the cache should hold the successful rubric replies"
    for path in files:  # the database and its write-ahead log, read as raw bytes
        assert planted_key.encode() not in path.read_bytes()
    assert planted_key not in caplog.text
    assert "retry" in caplog.text  # the logs did record the events


# ----------------------------------------------------------------------------- one retry level


def test_giving_up_names_the_attempts_once(loopback_llm: LoopbackLLM) -> None:
    loopback_llm.script(*[Reply.server_error(503)] * 3)
    judge = make_judge(loopback_llm, max_retries=2)
    with pytest.raises(JudgeError) as info:
        asyncio.run(judge.score_rubric("q?", ["c"], "a"))
    assert str(info.value) == (
        'openai judge gpt-4o-mini: HTTP 503: {"error": {"message": "internal error", '
        '"type": "server_error"}} (after 3 attempts)'
    )
    assert loopback_llm.count == 3


def test_build_judge_takes_the_runs_retries(
    loopback_llm: LoopbackLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-retries")
    embedder = HashEmbedder()
    default = build_judge("openai:m", embedder=embedder, cache_dir=None, base_url="http://h")
    assert isinstance(default, HttpJudge) and default.client.max_retries == 4
    judge = build_judge(
        "openai:m", embedder=embedder, cache_dir=None, base_url=loopback_llm.url, retries=1
    )
    assert isinstance(judge, HttpJudge) and judge.client.max_retries == 1
    judge.client.backoff_base = 0.01
    loopback_llm.script(*[Reply.server_error(500)] * 5)
    with pytest.raises(JudgeError, match=r"HTTP 500: .* \(after 2 attempts\)$"):
        asyncio.run(judge.score_relevance("q", "a"))
    assert loopback_llm.count == 2  # the run's retries=1: one retry, nothing more
    no_retry = build_judge(
        "ollama:m", embedder=embedder, cache_dir=None, base_url=loopback_llm.url, retries=0
    )
    assert isinstance(no_retry, HttpJudge) and no_retry.client.max_retries == 0


def test_a_key_echoed_in_a_retried_error_body_is_masked(
    loopback_llm: LoopbackLLM, planted_key: str, caplog: pytest.LogCaptureFixture
) -> None:
    judge = build_judge(
        "anthropic:claude-haiku-4-5",
        embedder=HashEmbedder(),
        cache_dir=None,
        base_url=loopback_llm.url,
        retries=1,
    )
    assert isinstance(judge, HttpJudge)
    judge.client.backoff_base = 0.01
    echo = json.dumps({"error": f"overloaded; your key {planted_key}"}).encode()
    loopback_llm.script(*[Reply(status=529, raw_body=echo)] * 2)
    with pytest.raises(JudgeError) as info:
        asyncio.run(judge.score_relevance("q", "a"))
    assert planted_key not in str(info.value) and "your key ***" in str(info.value)
    assert str(info.value).endswith("(after 2 attempts)")
    assert planted_key not in caplog.text
