"""Anthropic messages API: ``POST {base}/v1/messages`` with ``x-api-key`` and
``anthropic-version`` headers. The JSON shape is asked for in the prompt (the API has no
JSON mode); parsing and repair are shared (:mod:`engine.judges.http.client`).
"""

from __future__ import annotations

from typing import Any

from engine.judges.http.client import ChatReply, HttpJudgeClient
from engine.judges.http.judge import HttpJudge

ANTHROPIC_VERSION = "2023-06-01"


class AnthropicWire:
    """The messages wire format."""

    provider = "anthropic"

    def url(self, base_url: str) -> str:
        """``{base}/v1/messages``."""
        base = base_url.rstrip("/")
        if base.endswith("/v1"):
            return f"{base}/messages"
        return f"{base}/v1/messages"

    def headers(self, api_key: str | None) -> dict[str, str]:
        """``x-api-key`` and ``anthropic-version``."""
        headers = {"content-type": "application/json", "anthropic-version": ANTHROPIC_VERSION}
        if api_key:
            headers["x-api-key"] = api_key
        return headers

    def body(
        self, model: str, messages: list[dict[str, str]], system: str, temperature: float
    ) -> dict[str, Any]:
        """System prompt in ``system``; ``max_tokens`` is added by the client."""
        return {
            "model": model,
            "system": system,
            "messages": messages,
            "temperature": temperature,
        }

    def parse(self, payload: Any) -> ChatReply:
        """Text blocks of ``content`` joined, and ``usage``."""
        blocks = payload["content"]
        texts = [b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
        if not texts:
            raise ValueError("no text block in the reply")
        usage = payload.get("usage") or {}
        return ChatReply(
            content="".join(texts),
            input_tokens=int(usage.get("input_tokens", 0)),
            output_tokens=int(usage.get("output_tokens", 0)),
        )


class AnthropicJudge(HttpJudge):
    """An LLM judge over the Anthropic messages API."""

    def __init__(
        self, client: HttpJudgeClient, *, prompt_version: str = "v1", batch_claims: bool = False
    ) -> None:
        super().__init__(client, prompt_version=prompt_version, batch_claims=batch_claims)
