"""What every LLM judge over HTTP shares: transport, retries, cache, cost, prompts, parsing.

- Transport: one aiohttp client per event loop (:class:`engine.http.HttpSession`,
  pool sized to ``concurrency``), a timeout per request and an ``asyncio.Semaphore``
  limiting requests in flight.
- Retries: the one send-with-retries of :mod:`engine.http` (429, 5xx, timeouts,
  connection errors and non-JSON bodies, exponential backoff with jitter, ``Retry-After``
  honoured); ``max_retries`` retries per call, and nothing above retries again.
- Parsing: the model must answer one JSON object of the asked shape. Output that does not
  parse or validate is retried ONCE with a repair instruction, then ``JudgeResponseError``.
  Nothing is ever guessed.
- Cache: successful, validated replies only, keyed by provider, model, prompt version,
  prompt hash, temperature and the ask index of a repeat (:mod:`engine.judges.http.cache`,
  :mod:`engine.judges.asks`).
- Cost: tokens from the provider's ``usage`` block priced by :mod:`engine.pricing`.
- Batch mode (:meth:`HttpJudgeClient.use_batch`, OpenAI-compatible only): a first ask that
  misses the cache waits in a :class:`~engine.judges.http.batch_queue.BatchQueue` and is
  answered from a Batch API batch at the batch price; what the batch does not answer, and
  every repair, goes live.
- Secrets: the API key is read from the environment by the factory, sent in a header,
  registered with :mod:`engine.secrets` and masked in every message this module raises
  or logs.

Provider specifics (URL, headers, body, reply shape) live in a :class:`WireFormat`
(``openai_compat.py``, ``anthropic.py``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from engine.http import HttpSession, RetryPolicy, SendError, send_with_retries
from engine.judges.asks import current_ask
from engine.judges.base import JudgeGaveUp, JudgeResponseError, Usage
from engine.judges.http.batch_api import BatchApi
from engine.judges.http.batch_queue import BatchLedger, BatchQueue
from engine.judges.http.cache import JudgeCache, cache_key
from engine.judges.http.prompt import Prompt, load_prompt
from engine.judges.spend import record
from engine.pricing import PriceTable
from engine.secrets import redact, register, register_url

log = logging.getLogger("engine.judges.http")

T = TypeVar("T")


# --------------------------------------------------------------------------- wire formats


@dataclass(frozen=True)
class ChatReply:
    """The model's text and the tokens the provider counted."""

    content: str
    input_tokens: int
    output_tokens: int


class WireFormat(Protocol):
    """How one provider's HTTP API is spoken."""

    provider: str

    def url(self, base_url: str) -> str:
        """Endpoint URL for a base such as ``https://api.openai.com``."""
        ...

    def headers(self, api_key: str | None) -> dict[str, str]:
        """Request headers (the key goes here and nowhere else)."""
        ...

    def body(
        self, model: str, messages: list[dict[str, str]], system: str, temperature: float
    ) -> dict[str, Any]:
        """JSON request body."""
        ...

    def parse(self, payload: Any) -> ChatReply:
        """The reply text and token usage; raises KeyError/TypeError/ValueError if malformed."""
        ...


PricedReply = tuple[ChatReply, Usage]
"""A reply and what it cost."""

# --------------------------------------------------------------------------- client


def extract_json(content: str) -> Any:
    """The JSON object of a reply; tolerates a ```json fence around it, nothing more."""
    text = content.strip()
    fence = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", text, re.DOTALL)
    if fence:
        text = fence.group(1)
    return json.loads(text)


class HttpJudgeClient:
    """Sends chat requests for a judge: retries, concurrency limit, cache, repair, cost."""

    def __init__(
        self,
        wire: WireFormat,
        *,
        model: str,
        base_url: str,
        api_key: str | None,
        cache: JudgeCache | None = None,
        prices: PriceTable | None = None,
        concurrency: int = 8,
        timeout: float = 60.0,
        max_retries: int = 4,
        backoff_base: float = 0.5,
        backoff_max: float = 30.0,
        temperature: float = 0.0,
        max_tokens: int = 1024,
    ) -> None:
        self.wire = wire
        self.model = model
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self.cache = cache
        self.prices = prices or PriceTable()
        self.concurrency = concurrency
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.temperature = temperature
        self.max_tokens = max_tokens
        register(api_key)
        register_url(self.base_url)
        self._http = HttpSession(max_connections=concurrency)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._semaphore: asyncio.Semaphore | None = None
        self.batch: BatchQueue | None = None
        """Set by ``use_batch``: first asks go to the Batch API."""

    def use_batch(self, ledger: Path | None) -> BatchQueue:
        """Batch mode: first asks are queued into Batch API batches, recorded in the
        ledger file ``ledger`` (None: not resumable) and their answers in the cache."""
        api = BatchApi(
            self._http,
            self.base_url,
            self.wire.headers(self._api_key),
            self.policy,
            f"{self.wire.provider} judge {self.model}",
        )
        self.batch = BatchQueue(
            api,
            self.wire.parse,
            BatchLedger(ledger) if ledger is not None else None,
            store=self._store_batch_reply,
        )
        return self.batch

    def _store_batch_reply(self, key: str, reply: ChatReply) -> None:
        # Stored as it arrives, before a sample validates it: a run stopped meanwhile
        # finds it on resume. A reply its validator refuses is asked again live.
        if self.cache is not None:
            self.cache.put(key, self._entry("batch", reply))

    def _entry(self, prompt_id: str, reply: ChatReply) -> dict[str, Any]:
        return {
            "provider": self.wire.provider,
            "model": self.model,
            "prompt": prompt_id,
            "temperature": self.temperature,
            "content": reply.content,
            "input_tokens": reply.input_tokens,
            "output_tokens": reply.output_tokens,
        }

    def __repr__(self) -> str:  # never show the key
        return f"HttpJudgeClient({self.wire.provider}:{self.model} @ {redact(self.base_url)})"

    def scrub(self, text: str) -> str:
        """``text`` with every registered secret (this client's key among them) masked."""
        return redact(text)

    def _limit(self) -> asyncio.Semaphore:
        # A semaphore belongs to one event loop; a new loop (a new asyncio.run) gets a new one.
        loop = asyncio.get_running_loop()
        if self._semaphore is None or self._loop is not loop:
            self._loop = loop
            self._semaphore = asyncio.Semaphore(self.concurrency)
        return self._semaphore

    def policy(self) -> RetryPolicy:
        """The retry policy of one call, from the client's current settings."""
        return RetryPolicy(
            retries=max(0, self.max_retries),
            timeout_s=self.timeout,
            backoff_s=self.backoff_base,
            backoff_max_s=self.backoff_max,
            retry_after_max_s=max(self.backoff_max, 1.0) * 4,
        )

    async def aclose(self) -> None:
        """Close the HTTP connections of the current loop; the cache's entries reach disk."""
        if self.batch is not None:
            await self.batch.aclose()
        await self._http.aclose()
        if self.cache is not None:
            await asyncio.to_thread(self.cache.flush)

    def _body(self, messages: list[dict[str, str]], system: str) -> dict[str, Any]:
        body = self.wire.body(self.model, messages, system, self.temperature)
        body.setdefault("max_tokens", self.max_tokens)
        return body

    async def _first(self, key: str, messages: list[dict[str, str]], system: str) -> PricedReply:
        """The first reply to a prompt: from a batch when in batch mode and the batch
        answered it (at the batch price), else live."""
        if self.batch is not None:
            reply, pays = await self.batch.ask(key, self._body(messages, system))
            if isinstance(reply, ChatReply):
                return reply, record(self._usage(reply, batch=True)) if pays else Usage()
        reply = await self._post(messages, system)
        return reply, record(self._usage(reply))

    async def _post(self, messages: list[dict[str, str]], system: str) -> ChatReply:
        body = self._body(messages, system)
        label = f"{self.wire.provider} judge {self.model}"
        try:
            sent = await send_with_retries(
                self._http,
                self.wire.url(self.base_url),
                policy=self.policy(),
                parse=lambda response: self.wire.parse(response.json()),
                content=json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode(),
                headers=self.wire.headers(self._api_key),
                label=label,
                # A proxy's HTML page or a truncated body: transient more often than not.
                retry_unreadable=True,
                limit=self._limit(),
            )
        except SendError as err:
            # The HTTP layer already retried what was worth retrying: retrying the whole
            # sample would only repeat it (one level of retries).
            raise JudgeGaveUp(redact(f"{label}: {err}")) from None
        return sent.value

    async def say(self, text: str) -> ChatReply:
        """One live call with ``text`` as the user message: no cache, no repair, no cost
        recorded (a connection check, not a judgement). Raises JudgeGaveUp, masked."""
        return await self._post([{"role": "user", "content": text}], "")

    def _usage(self, reply: ChatReply, *, batch: bool = False) -> Usage:
        return Usage(
            input_tokens=reply.input_tokens,
            output_tokens=reply.output_tokens,
            cost_usd=self.prices.cost(
                self.model, reply.input_tokens, reply.output_tokens, batch=batch
            ),
            calls=1,
        )

    async def complete_json(
        self, prompt: Prompt, values: dict[str, str], validate: Callable[[Any], T]
    ) -> tuple[T, Usage]:
        """Ask, parse the JSON reply and validate it (``validate`` raises on a bad shape).

        Cached replies cost nothing. A reply that fails to parse or validate is retried once
        with a repair instruction; the second failure raises JudgeResponseError.
        """
        system, user = prompt.render(**values)
        key = cache_key(
            self.wire.provider,
            self.model,
            prompt.id,
            json.dumps([system, user], ensure_ascii=False),
            self.temperature,
            current_ask(),
        )
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None and isinstance(hit.get("content"), str):
                try:
                    return validate(extract_json(hit["content"])), Usage()
                except (json.JSONDecodeError, JudgeResponseError, KeyError, TypeError, ValueError):
                    pass  # an entry written by an older validator: ask again
        messages = [{"role": "user", "content": user}]
        reply, usage = await self._first(key, messages, system)
        try:
            value = validate(extract_json(reply.content))
        except (json.JSONDecodeError, JudgeResponseError, KeyError, TypeError, ValueError) as e:
            problem = self.scrub(_describe(e))
            _, repair_user = load_prompt("repair").render(error=problem)
            messages = [
                *messages,
                {"role": "assistant", "content": reply.content},
                {"role": "user", "content": repair_user},
            ]
            log.warning(
                "%s judge %s: %s; asking for a repair", self.wire.provider, self.model, problem
            )
            reply = await self._post(messages, system)
            usage = usage + record(self._usage(reply))
            try:
                value = validate(extract_json(reply.content))
            except (
                json.JSONDecodeError,
                JudgeResponseError,
                KeyError,
                TypeError,
                ValueError,
            ) as e2:
                raise JudgeResponseError(
                    f"{self.wire.provider} judge {self.model}: unusable reply to {prompt.id} "
                    f"after one repair: {self.scrub(_describe(e2))}"
                ) from None
        if self.cache is not None:
            self.cache.put(key, self._entry(prompt.id, reply))
        return value, usage


def _describe(error: Exception) -> str:
    if isinstance(error, json.JSONDecodeError):
        return "the reply is not a JSON object"
    return str(error) or type(error).__name__
