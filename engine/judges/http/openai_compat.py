"""OpenAI-compatible chat completions: OpenAI, Ollama, vLLM, LM Studio.

``POST {base}/v1/chat/completions`` with ``response_format: {"type": "json_object"}`` and a
bearer key (none for Ollama). Everything else is shared (:mod:`engine.judges.http.client`).
"""

from __future__ import annotations

from typing import Any

from engine.judges.http.client import ChatReply, HttpJudgeClient
from engine.judges.http.judge import HttpJudge


class OpenAIWire:
    """The chat-completions wire format."""

    def __init__(self, provider: str = "openai") -> None:
        self.provider = provider
        """``openai`` or ``ollama`` (recorded in the judge name and the cache key)."""

    def url(self, base_url: str) -> str:
        """``{base}/v1/chat/completions`` (a base that already ends in /v1 is kept)."""
        base = base_url.rstrip("/")
        if base.endswith("/v1"):
            return f"{base}/chat/completions"
        return f"{base}/v1/chat/completions"

    def headers(self, api_key: str | None) -> dict[str, str]:
        """Bearer key when there is one."""
        headers = {"content-type": "application/json"}
        if api_key:
            headers["authorization"] = f"Bearer {api_key}"
        return headers

    def body(
        self, model: str, messages: list[dict[str, str]], system: str, temperature: float
    ) -> dict[str, Any]:
        """System prompt as the first message; JSON mode on."""
        return {
            "model": model,
            "messages": [{"role": "system", "content": system}, *messages],
            "temperature": temperature,
            "response_format": {"type": "json_object"},
        }

    def parse(self, payload: Any) -> ChatReply:
        """``choices[0].message.content`` and ``usage``."""
        content = payload["choices"][0]["message"]["content"]
        if not isinstance(content, str):
            raise TypeError("message content is not text")
        usage = payload.get("usage") or {}
        return ChatReply(
            content=content,
            input_tokens=int(usage.get("prompt_tokens", 0)),
            output_tokens=int(usage.get("completion_tokens", 0)),
        )


class OpenAICompatJudge(HttpJudge):
    """An LLM judge over an OpenAI-compatible API."""

    def __init__(
        self, client: HttpJudgeClient, *, prompt_version: str = "v1", batch_claims: bool = False
    ) -> None:
        super().__init__(client, prompt_version=prompt_version, batch_claims=batch_claims)
