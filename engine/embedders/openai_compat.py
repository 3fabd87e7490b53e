"""Embeddings over HTTP from any OpenAI-compatible ``/v1/embeddings`` endpoint.

Works with OpenAI, Ollama, vLLM and Hugging Face TEI: the request is
``{"model": ..., "input": [...]}`` and the answer ``{"data": [{"embedding": [...],
"index": i}], "usage": {...}}``. The API key is read from an environment variable only
and never appears in logs or exception messages.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np

from engine.embedders.base import EmbedderError, Vectors
from engine.retry import RETRY_STATUS, Retryable, backoff_delay, retry_after_seconds

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com"
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
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 30.0,
        max_retries: int = 4,
        backoff_base: float = 0.5,
        backoff_max: float = 30.0,
        batch_size: int = MAX_BATCH,
        threshold: float = OPENAI_THRESHOLD,
    ) -> None:
        """Configure the client; nothing is sent until ``embed``."""
        if not model:
            raise ValueError("an embedding model name is required (openai:MODEL)")
        base = (base_url or DEFAULT_BASE_URL).rstrip("/")
        # Accept both "http://host" and "http://host/v1" as the base URL.
        self._url = (base[: -len("/v1")] if base.endswith("/v1") else base) + "/v1/embeddings"
        self._model = model
        self._api_key_env = api_key_env
        self._timeout = timeout
        self._max_retries = max(0, max_retries)
        self._backoff_base = backoff_base
        self._backoff_max = backoff_max
        self._batch_size = max(1, min(batch_size, MAX_BATCH))
        self._threshold = threshold
        self._lock = threading.Lock()
        self._client: httpx.Client | None = None
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
        """Close the HTTP connection pool."""
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def _http(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                self._client = httpx.Client(timeout=httpx.Timeout(self._timeout))
            return self._client

    def _secret(self) -> str | None:
        key = os.environ.get(self._api_key_env)
        return key or None

    def _redact(self, text: str) -> str:
        key = self._secret()
        return text.replace(key, "***") if key else text

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` in batches of at most 256; raises EmbedderError after retries."""
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        parts = [
            self._embed_batch(list(texts[i : i + self._batch_size]))
            for i in range(0, len(texts), self._batch_size)
        ]
        return np.vstack(parts)

    def _embed_batch(self, batch: list[str]) -> Vectors:
        # Some servers reject empty strings; a space embeds as "nothing" just as well.
        payload = {"model": self._model, "input": [t if t.strip() else " " for t in batch]}
        last = "no attempt made"
        for attempt in range(self._max_retries + 1):
            try:
                return self._post(payload, len(batch))
            except Retryable as exc:
                last = str(exc)
                if attempt == self._max_retries:
                    break
                delay = self._backoff(attempt, exc.retry_after)
                log.warning("embeddings call failed (%s); retry in %.2fs", last, delay)
                time.sleep(delay)
        raise EmbedderError(
            f"embeddings from {self._url} failed after {self._max_retries + 1} attempts: {last}"
        )

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        return backoff_delay(attempt, self._backoff_base, self._backoff_max, retry_after)

    def _post(self, payload: dict[str, Any], expected: int) -> Vectors:
        headers = {"Content-Type": "application/json"}
        key = self._secret()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        try:
            response = self._http().post(self._url, json=payload, headers=headers)
        except httpx.TimeoutException as exc:
            raise Retryable(f"timeout after {self._timeout:g}s ({type(exc).__name__})") from None
        except httpx.TransportError as exc:
            raise Retryable(f"connection error: {type(exc).__name__}") from None
        if response.status_code in RETRY_STATUS:
            raise Retryable(
                f"HTTP {response.status_code}",
                retry_after_seconds(response.headers.get("Retry-After")),
            )
        if response.status_code >= 400:
            snippet = self._redact(response.text[:200])
            raise EmbedderError(f"HTTP {response.status_code} from {self._url}: {snippet}")
        return self._parse(response.content, expected)

    def _parse(self, content: bytes, expected: int) -> Vectors:
        try:
            body = json.loads(content)
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
            raise Retryable(f"malformed embeddings body ({exc})") from None
        self._dim = matrix.shape[1]
        usage = body.get("usage") if isinstance(body, dict) else None
        if isinstance(usage, dict):
            tokens = usage.get("prompt_tokens", usage.get("total_tokens", 0))
            with self._lock:
                self.tokens_used += int(tokens) if isinstance(tokens, int | float) else 0
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return (matrix / np.where(norms > 0, norms, 1.0)).astype(np.float32)
