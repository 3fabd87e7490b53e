"""Embeddings over HTTP from any OpenAI-compatible ``/v1/embeddings`` endpoint.

Works with OpenAI, Ollama, vLLM and Hugging Face TEI: the request is
``{"model": ..., "input": [...]}`` and the answer ``{"data": [{"embedding": [...],
"index": i}], "usage": {...}}``. The API key is read from an environment variable only,
registered with :mod:`engine.secrets` and never appears in logs or exception messages.

Requests go through the one send-with-retries of :mod:`engine.http`. ``embed`` is
synchronous (the analyzer calls it from a worker thread), so the requests run on a private
event loop thread that keeps one connection pool for the embedder's life.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence

import numpy as np

from engine.embedders.base import EmbedderError, Vectors
from engine.http import (
    HttpReply,
    HttpSession,
    LoopThread,
    RetryPolicy,
    SendError,
    UnreadableReply,
    send_with_retries,
)
from engine.providers import API_KEY_ENV, OPENAI_BASE_URL
from engine.secrets import env_secret, redact, register_url

DEFAULT_BASE_URL = OPENAI_BASE_URL
OPENAI_THRESHOLD = 0.75
"""The spec's claim threshold, meant for OpenAI-style embedders."""
MAX_BATCH = 256


class OpenAICompatEmbedder:
    """Embeddings from ``{base_url}/v1/embeddings`` with retries, backoff and jitter."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = API_KEY_ENV["openai"],
        timeout: float = 30.0,
        max_retries: int = 4,
        backoff_base: float = 0.5,
        backoff_max: float = 30.0,
        batch_size: int = MAX_BATCH,
        threshold: float = OPENAI_THRESHOLD,
        concurrency: int = 8,
    ) -> None:
        """Configure the client; nothing is sent until ``embed``."""
        if not model:
            raise ValueError("an embedding model name is required (openai:MODEL)")
        base = (base_url or DEFAULT_BASE_URL).rstrip("/")
        # Accept both "http://host" and "http://host/v1" as the base URL.
        self._url = (base[: -len("/v1")] if base.endswith("/v1") else base) + "/v1/embeddings"
        register_url(self._url)
        self._model = model
        self._api_key_env = api_key_env
        self._policy = RetryPolicy(
            retries=max(0, max_retries),
            timeout_s=timeout,
            backoff_s=backoff_base,
            backoff_max_s=backoff_max,
            retry_after_max_s=backoff_max,
        )
        self._batch_size = max(1, min(batch_size, MAX_BATCH))
        self._threshold = threshold
        self._lock = threading.Lock()
        self._session = HttpSession(max_connections=concurrency)
        self._loop = LoopThread(f"embeddings {model}")
        self._dim: int | None = None
        self.tokens_used = 0
        """Prompt tokens reported by the server, summed over all calls."""

    @property
    def name(self) -> str:
        """``openai:MODEL``."""
        return f"openai:{self._model}"

    @property
    def default_threshold(self) -> float:
        """0.75, the spec's threshold for OpenAI-style embedders."""
        return self._threshold

    def close(self) -> None:
        """Close the HTTP connection pool and its loop thread."""
        self._loop.close(self._session.aclose)

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` in batches of at most 256; raises EmbedderError after retries."""
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        parts = [
            self._loop.run(self._embed_batch(list(texts[i : i + self._batch_size])))
            for i in range(0, len(texts), self._batch_size)
        ]
        return np.vstack(parts)

    async def _embed_batch(self, batch: list[str]) -> Vectors:
        # Some servers reject empty strings; a space embeds as "nothing" just as well.
        payload = {"model": self._model, "input": [t if t.strip() else " " for t in batch]}
        headers = {"Content-Type": "application/json"}
        key = env_secret(self._api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        try:
            sent = await send_with_retries(
                self._session,
                self._url,
                policy=self._policy,
                parse=lambda response: self._parse(response, len(batch)),
                content=json.dumps(payload, ensure_ascii=False).encode("utf-8"),
                headers=headers,
                label=f"embeddings from {self._url}",
                retry_unreadable=True,
            )
        except SendError as err:
            raise EmbedderError(redact(f"embeddings from {self._url}: {err}")) from None
        return sent.value

    def _parse(self, response: HttpReply, expected: int) -> Vectors:
        try:
            body = json.loads(response.content)
            data = body["data"]
            if not isinstance(data, list) or len(data) != expected:
                raise ValueError(f"expected {expected} embeddings, got {len(data)}")
            rows = sorted(data, key=lambda item: int(item.get("index", 0)))
            matrix = np.array([row["embedding"] for row in rows], dtype=np.float32)
            if matrix.ndim != 2 or matrix.shape[1] == 0 or not np.isfinite(matrix).all():
                raise ValueError("embeddings are not a finite (n, d) matrix")
            if self._dim is not None and matrix.shape[1] != self._dim:
                raise ValueError(f"dimension changed from {self._dim} to {matrix.shape[1]}")
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise UnreadableReply(f"malformed embeddings body ({exc})") from None
        self._dim = matrix.shape[1]
        usage = body.get("usage") if isinstance(body, dict) else None
        if isinstance(usage, dict):
            tokens = usage.get("prompt_tokens", usage.get("total_tokens", 0))
            with self._lock:
                self.tokens_used += int(tokens) if isinstance(tokens, int | float) else 0
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return (matrix / np.where(norms > 0, norms, 1.0)).astype(np.float32)
