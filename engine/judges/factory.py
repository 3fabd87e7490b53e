"""Builds a judge from its spec string: ``local``, ``openai:MODEL``, ``anthropic:MODEL``,
``ollama:MODEL``. The composition root (CLI, runner) calls this; evaluators never do.

API keys come from the environment only (OPENAI_API_KEY, ANTHROPIC_API_KEY; none for
Ollama) and are never stored in the judge's name, the cache or any record. Base URLs come
from OPENAI_BASE_URL, ANTHROPIC_BASE_URL and OLLAMA_BASE_URL (default
``http://127.0.0.1:11434``) when set.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engine.embedders.base import Embedder
from engine.judges.base import Judge, JudgeError
from engine.judges.http.anthropic import AnthropicJudge, AnthropicWire
from engine.judges.http.cache import JudgeCache
from engine.judges.http.client import HttpJudgeClient
from engine.judges.http.judge import HttpJudge
from engine.judges.http.openai_compat import OpenAICompatJudge, OpenAIWire
from engine.judges.local.judge import LocalJudge
from engine.pricing import PriceTable
from engine.providers import (
    ANTHROPIC_BASE_URL,
    API_KEY_ENV,
    OLLAMA_BASE_URL,
    OPENAI_BASE_URL,
)
from engine.secrets import env_secret
from engine.verifier.choice import ClaimVerifier

JUDGE_PROVIDERS: tuple[str, ...] = ("openai", "anthropic", "ollama")
"""The providers of LLM judges, as a judge spec names them (``openai:MODEL``)."""


def judge_spec_for(model: str, run_judge: str) -> str:
    """The judge spec of a grader's own judge: ``model`` as given when it is a spec
    (``openai:gpt-4o-mini``, ``local``), else a bare model name (the write-up's
    ``model: gpt-4.1-mini``) on the provider of the run's judge. Raises JudgeError for a
    bare name when the run's judge is local (it has no provider to lend)."""
    model = model.strip()
    provider, sep, _ = model.partition(":")
    if model == "local" or (sep and provider in JUDGE_PROVIDERS):
        return model
    run_provider, sep, _ = run_judge.strip().partition(":")
    if not sep or run_provider not in JUDGE_PROVIDERS:
        raise JudgeError(
            f"model {model!r} names no provider, and the run's judge {run_judge!r} has none "
            f"to lend: write it as openai:{model}, anthropic:{model} or ollama:{model}"
        )
    return f"{run_provider}:{model}"


def build_judge(
    spec: str,
    *,
    embedder: Embedder,
    cache_dir: Path | None,
    base_url: str | None = None,
    prices: Mapping[str, Any] | None = None,
    concurrency: int = 8,
    timeout: float = 60.0,
    max_retries: int = 4,
    retries: int | None = None,
    batch_claims: bool = True,
    verifier: ClaimVerifier | None = None,
    judge_mode: str = "live",
    batch_ledger: Path | None = None,
    temperature: float = 0.0,
) -> Judge:
    """The judge named by ``spec``. Raises JudgeError for an unknown spec or a missing key.

    ``retries`` (the run's ``retries``) are the retries of each HTTP call after its first
    attempt; when given it replaces ``max_retries``. These are the only retries of a judge
    call: nothing above the HTTP layer retries again. ``batch_claims`` verifies all of a
    sample's claims in one call (False: one call per claim and one per context chunk).
    ``verifier`` decides the local judge's claims (None: its rules and combiner).
    ``judge_mode`` ``batch`` sends an ``openai:`` judge's prompts through the Batch API,
    the batches it creates recorded in ``batch_ledger`` (None: not resumable).
    ``temperature`` is an LLM judge's sampling temperature (the local judge has none)."""
    spec = spec.strip()
    if spec == "local":
        return LocalJudge(embedder, verifier=verifier)
    return build_llm_judge(
        spec,
        cache_dir=cache_dir,
        base_url=base_url,
        prices=prices,
        concurrency=concurrency,
        timeout=timeout,
        max_retries=max_retries if retries is None else retries,
        batch_claims=batch_claims,
        judge_mode=judge_mode,
        batch_ledger=batch_ledger,
        temperature=temperature,
    )


def build_llm_judge(
    spec: str,
    *,
    cache_dir: Path | None,
    base_url: str | None = None,
    prices: Mapping[str, Any] | None = None,
    concurrency: int = 8,
    timeout: float = 60.0,
    max_retries: int = 4,
    batch_claims: bool = True,
    judge_mode: str = "live",
    batch_ledger: Path | None = None,
    temperature: float = 0.0,
) -> HttpJudge:
    """The LLM judge named by ``spec`` (``openai:MODEL``, ``anthropic:MODEL``,
    ``ollama:MODEL``), without the embedder only the local judge needs. Raises JudgeError."""
    spec = spec.strip()
    provider, sep, model = spec.partition(":")
    if not sep or not model:
        raise JudgeError(
            f"unknown judge {spec!r}: use local, openai:MODEL, anthropic:MODEL or ollama:MODEL"
        )
    if judge_mode == "batch" and provider != "openai":
        raise JudgeError(f"judge mode batch needs an openai: judge (the Batch API), not {spec!r}")
    cache = JudgeCache(cache_dir) if cache_dir is not None else None
    table = PriceTable(prices)
    common: dict[str, Any] = {
        "model": model,
        "cache": cache,
        "prices": table,
        "concurrency": concurrency,
        "timeout": timeout,
        "max_retries": max_retries,
        "temperature": temperature,
    }
    if provider == "openai":
        key = env_secret(API_KEY_ENV["openai"])
        if not key:
            raise JudgeError("openai judge needs the OPENAI_API_KEY environment variable")
        url = base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_BASE_URL
        client = HttpJudgeClient(OpenAIWire("openai"), base_url=url, api_key=key, **common)
        if judge_mode == "batch":
            client.use_batch(batch_ledger)
        return OpenAICompatJudge(client, batch_claims=batch_claims)
    if provider == "ollama":
        # Ollama often runs on another machine or port than the default.
        url = base_url or os.environ.get("OLLAMA_BASE_URL") or OLLAMA_BASE_URL
        return OpenAICompatJudge(
            HttpJudgeClient(OpenAIWire("ollama"), base_url=url, api_key=None, **common),
            batch_claims=batch_claims,
        )
    if provider == "anthropic":
        key = env_secret(API_KEY_ENV["anthropic"])
        if not key:
            raise JudgeError("anthropic judge needs the ANTHROPIC_API_KEY environment variable")
        url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or ANTHROPIC_BASE_URL
        return AnthropicJudge(
            HttpJudgeClient(AnthropicWire(), base_url=url, api_key=key, **common),
            batch_claims=batch_claims,
        )
    raise JudgeError(
        f"unknown judge provider {provider!r}: use local, openai:, anthropic: or ollama:"
    )
