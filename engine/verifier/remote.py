"""A grounding model over HTTP as the claim verifier (``--verifier openai:MODEL`` or
``--verifier ollama:MODEL``, e.g. ``ollama:bespoke-minicheck``).

Each (evidence, claim) pair is one chat call with the MiniCheck prompt
(``Document: ... Claim: ...``), answered ``Yes`` (the document supports the claim) or ``No``.
When the server returns log-probabilities of the first answer token (OpenAI, recent Ollama),
P(supported) is their share of yes against no; otherwise the answer is taken as certain. A
grounding model has no "contradicted" answer: its ``No`` is not supported. Keys come from the
environment only (``OPENAI_API_KEY``; none for Ollama); base URLs from ``OPENAI_BASE_URL`` and
``OLLAMA_BASE_URL``.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from engine.http import (
    HttpReply,
    HttpSession,
    LoopThread,
    RetryPolicy,
    SendError,
    UnreadableReply,
    send_with_retries,
)
from engine.providers import API_KEY_ENV, OLLAMA_BASE_URL, OPENAI_BASE_URL
from engine.secrets import env_secret, redact, register_url

SYSTEM_PROMPT = (
    "You check whether a document supports a claim. Answer Yes if every part of the claim "
    "is stated or directly implied by the document, otherwise No. Answer with one word."
)
USER_TEMPLATE = "Document: {document}\nClaim: {claim}"
"""The MiniCheck prompt (Bespoke-MiniCheck is trained on exactly this form)."""

PROVIDERS: dict[str, tuple[str, str, str | None]] = {
    # provider: (base URL environment variable, default base URL, key environment variable)
    "openai": ("OPENAI_BASE_URL", OPENAI_BASE_URL, API_KEY_ENV["openai"]),
    "ollama": ("OLLAMA_BASE_URL", OLLAMA_BASE_URL, None),
}

_YES = frozenset({"yes", "y", "true", "supported"})
_NO = frozenset({"no", "n", "false", "unsupported", "not"})


class RemoteVerifierError(RuntimeError):
    """The grounding model could not be reached or answered something else."""


def parse_spec(spec: str) -> tuple[str, str]:
    """``(provider, model)`` of ``openai:MODEL`` / ``ollama:MODEL``; ``ValueError`` else."""
    provider, sep, model = spec.strip().partition(":")
    if not sep or provider not in PROVIDERS or not model.strip():
        raise ValueError(
            f"verifier {spec!r}: expected rules, crossencoder, openai:MODEL or ollama:MODEL "
            "(for example ollama:bespoke-minicheck)"
        )
    return provider, model.strip()


def _answer_probability(choice: dict[str, Any]) -> float:
    """P(yes) of one chat choice: from the first token's log-probabilities when given,
    else 1 or 0 from the answer's text."""
    logprobs = (choice.get("logprobs") or {}).get("content") or []
    if logprobs:
        first = logprobs[0]
        candidates = [first, *(first.get("top_logprobs") or [])]
        yes = no = 0.0
        seen: set[str] = set()
        for item in candidates:
            raw = str(item.get("token", ""))
            if raw in seen:  # the chosen token is listed again among the top ones
                continue
            seen.add(raw)
            token = raw.strip().lower()
            p = math.exp(float(item.get("logprob", -math.inf)))
            if token in _YES:
                yes += p
            elif token in _NO:
                no += p
        if yes + no > 0:
            return yes / (yes + no)
    text = str((choice.get("message") or {}).get("content") or "").strip().lower()
    word = text.split()[0].strip(".,!:;") if text.split() else ""
    if word in _YES:
        return 1.0
    if word in _NO:
        return 0.0
    raise UnreadableReply(f"the verifier answered {text[:60]!r}, not Yes or No")


class RemoteVerifier:
    """(evidence, claim) -> P(supported, contradicted, not_supported) from a grounding model.

    Same interface as the local cross-encoder (``predict``), so the judge and the analyzer
    use either. Calls go out concurrently (``concurrency`` in flight) on one kept-alive pool.
    """

    def __init__(
        self,
        spec: str,
        *,
        concurrency: int = 8,
        policy: RetryPolicy | None = None,
        base_url: str | None = None,
    ) -> None:
        provider, model = parse_spec(spec)
        url_env, default_url, self._key_env = PROVIDERS[provider]
        base = (base_url or os.environ.get(url_env) or default_url).rstrip("/")
        self._url = base.removesuffix("/v1") + "/v1/chat/completions"
        register_url(self._url)
        self._model = model
        self.name = f"{provider}:{model}"
        """The verifier's spec, as recorded with every run."""
        self.version = self.name
        self.pays_per_pair = True
        """One call per pair: one window per claim (``engine.verifier.decide``)."""
        self._policy = policy or RetryPolicy(retries=2, timeout_s=60.0)
        self._concurrency = max(1, concurrency)
        self._session = HttpSession(max_connections=self._concurrency)
        self._loop = LoopThread(f"verifier {self.name}")
        self.calls = 0
        """Calls made so far (one per pair)."""

    def close(self) -> None:
        """Close the connection pool and its loop thread."""
        self._loop.close(self._session.aclose)

    def predict(self, pairs: Sequence[tuple[str, str]]) -> npt.NDArray[np.float64]:
        """Probabilities (supported, contradicted, not_supported) per pair; contradicted is
        always 0 (a grounding model answers only yes or no)."""
        out = np.zeros((len(pairs), 3), dtype=np.float64)
        if not pairs:
            return out
        supported = self._loop.run(self._all(pairs))
        out[:, 0] = supported
        out[:, 2] = 1.0 - out[:, 0]
        return out

    async def _all(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        # Made here, on the loop that uses it (a semaphore belongs to one event loop).
        limit = asyncio.Semaphore(self._concurrency)
        return list(await asyncio.gather(*(self._one(e, c, limit) for e, c in pairs)))

    async def _one(self, evidence: str, claim: str, limit: asyncio.Semaphore) -> float:
        body = {
            "model": self._model,
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": USER_TEMPLATE.format(document=evidence, claim=claim)},
            ],
            "temperature": 0,
            "max_tokens": 1,
            "logprobs": True,
            "top_logprobs": 5,
        }
        headers = {"Content-Type": "application/json"}
        key = env_secret(self._key_env) if self._key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self.calls += 1
        try:
            sent = await send_with_retries(
                self._session,
                self._url,
                policy=self._policy,
                parse=_parse,
                content=json.dumps(body, ensure_ascii=False).encode("utf-8"),
                headers=headers,
                label=f"verifier {self.name}",
                retry_unreadable=True,
                limit=limit,
            )
        except SendError as err:
            raise RemoteVerifierError(redact(f"verifier {self.name}: {err}")) from None
        return sent.value


def _parse(response: HttpReply) -> float:
    try:
        choice = json.loads(response.content)["choices"][0]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise UnreadableReply(f"not a chat completion ({type(exc).__name__})") from None
    return _answer_probability(choice)
