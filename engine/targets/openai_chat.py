"""The ``openai:MODEL`` target: an OpenAI-compatible chat model answers each question.

Works with OpenAI and anything speaking its chat-completions wire format (Ollama, vLLM,
LM Studio). The key is read from ``OPENAI_API_KEY`` only and the base URL from
``OPENAI_BASE_URL`` (default ``https://api.openai.com/v1``; ``/v1`` is added when missing,
as the judges do, so one setting serves both). The system prompt is a
versioned file, ``engine/targets/prompts/system.<version>.md``; its version is part of the
target's recorded name so runs with different prompts are never confused.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from engine.http import RetryPolicy
from engine.models import TestCase
from engine.pricing import PriceTable
from engine.providers import API_KEY_ENV, OPENAI_BASE_URL
from engine.secrets import env_secret, register, register_url
from engine.targets.base import (
    DEFAULT_POLICY,
    TargetConfigError,
    TargetError,
    TargetResponse,
    request_json,
    session_for,
)

PROMPTS = Path(__file__).resolve().parent / "prompts"
DEFAULT_BASE_URL = f"{OPENAI_BASE_URL}/v1"
DEFAULT_PROMPT = "v1"


def load_system_prompt(version: str) -> tuple[str, str]:
    """(label, text) of a system prompt: a version like ``v1`` or a path to a file."""
    candidate = Path(version)
    if candidate.suffix and candidate.is_file():
        text = candidate.read_text(encoding="utf-8")
        digest = hashlib.sha256(text.encode()).hexdigest()[:8]
        return f"{candidate.stem}-{digest}", text
    path = PROMPTS / f"system.{version}.md"
    if not path.is_file():
        known = sorted(
            p.name.removeprefix("system.").removesuffix(".md") for p in PROMPTS.glob("system.*.md")
        )
        raise TargetConfigError(
            f"no system prompt {version!r} ({path} is missing); known versions: {', '.join(known)}"
        )
    return f"system.{version}", path.read_text(encoding="utf-8").strip()


def conversation_turn(case: TestCase) -> tuple[list[dict[str, str]], list[dict[str, str]]] | None:
    """For the case of one turn of a conversation (``engine.run.conversing.turn_case``): the
    system message of the conversation's chatbot role (none without one) and the history so
    far, oldest first. None for any other case."""
    history = case.metadata.get("messages")
    if not isinstance(history, list):
        return None
    role = case.metadata.get("chatbot_role")
    extra = [{"role": "system", "content": role}] if isinstance(role, str) and role else []
    return extra, [dict(m) for m in history]


class OpenAIChatTarget:
    """Chat completions with a versioned system prompt; one request per case."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        prompt: str = DEFAULT_PROMPT,
        temperature: float = 0.0,
        include_context: bool = False,
        prices: tuple[float, float] | None = None,
        policy: RetryPolicy = DEFAULT_POLICY,
        concurrency: int | None = None,
    ) -> None:
        if not model:
            raise TargetConfigError("openai target needs a model: --target openai:MODEL")
        self.model = model
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip(
            "/"
        )
        register_url(self.base_url)
        if api_key is not None:
            register(api_key)
        self._key = api_key if api_key is not None else (env_secret(API_KEY_ENV["openai"]) or "")
        if not self._key and self.base_url.startswith(OPENAI_BASE_URL):
            raise TargetConfigError(
                "OPENAI_API_KEY is not set; export it (keys are read from the environment only) "
                "or point OPENAI_BASE_URL at a local OpenAI-compatible server"
            )
        self.prompt_label, self.system_prompt = load_system_prompt(prompt)
        self.temperature = temperature
        self.include_context = include_context
        self.prices = prices if prices is not None else PriceTable().prices(model) or (0.0, 0.0)
        self.policy = policy
        self._session = session_for(concurrency)

    @property
    def url(self) -> str:
        """``{base}/v1/chat/completions``; a base already ending in /v1 is kept (as the judges)."""
        if self.base_url.endswith("/v1"):
            return f"{self.base_url}/chat/completions"
        return f"{self.base_url}/v1/chat/completions"

    @property
    def name(self) -> str:
        """``openai:MODEL@system.v1``."""
        return f"openai:{self.model}@{self.prompt_label}"

    def request_body(self, case: TestCase) -> dict[str, Any]:
        """The chat-completions request for one case. A turn of a conversation (its
        ``metadata["messages"]``, see ``engine.run.conversing``) sends the whole history
        after the system prompt and the conversation's chatbot role."""
        turn = conversation_turn(case)
        if turn is not None:
            role, history = turn
            messages = [{"role": "system", "content": self.system_prompt}, *role, *history]
            return {"model": self.model, "temperature": self.temperature, "messages": messages}
        user = case.query
        if self.include_context and case.effective_context:
            passages = "\n\n".join(case.effective_context)
            user = f"{case.query}\n\nUse this context:\n{passages}"
        return {
            "model": self.model,
            "temperature": self.temperature,
            "messages": [
                {"role": "system", "content": self.system_prompt},
                {"role": "user", "content": user},
            ],
        }

    async def respond(self, case: TestCase) -> TargetResponse:
        """Ask the model; tokens and cost come from the answer's ``usage`` block."""
        headers = {"Content-Type": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        what = f"target {self.name} on case {case.id!r}"
        result = await request_json(
            self._session,
            self.url,
            body=json.dumps(self.request_body(case)).encode(),
            headers=headers,
            policy=self.policy,
            what=what,
        )
        payload = result.value
        try:
            text = payload["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise TargetError(f"{what}: answer has no choices[0].message.content") from exc
        if not isinstance(text, str):
            raise TargetError(f"{what}: choices[0].message.content is not text")
        usage = payload.get("usage") if isinstance(payload, dict) else None
        usage = usage if isinstance(usage, dict) else {}
        tokens_in = usage.get("prompt_tokens")
        tokens_out = usage.get("completion_tokens")
        tin = int(tokens_in) if isinstance(tokens_in, int) else None
        tout = int(tokens_out) if isinstance(tokens_out, int) else None
        cost = ((tin or 0) * self.prices[0] + (tout or 0) * self.prices[1]) / 1_000_000
        return TargetResponse(
            text=text,
            contexts=None,
            latency_ms=result.latency_ms,
            input_tokens=tin,
            output_tokens=tout,
            cost_usd=cost,
            calls=result.attempts,
        )

    async def aclose(self) -> None:
        """Close the HTTP connections this target opened."""
        await self._session.aclose()
