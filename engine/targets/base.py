"""The target seam: where the responses a run scores come from.

A target turns a test case into a ``TargetResponse``: the recorded answer of the test
set, a chat model's answer, or an HTTP endpoint's. Its latency, tokens and cost are
recorded apart from the judge's. HTTP targets send through ``request_json``, a thin
wrapper of the one send-with-retries (:mod:`engine.http`) that turns its failure into a
``TargetError``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from engine.errors import InputError
from engine.http import (
    HttpSession,
    RetryPolicy,
    SendError,
    Sent,
    parse_json,
    send_with_retries,
)
from engine.models import TestCase
from engine.retry import retry_after_seconds as _retry_after_seconds
from engine.secrets import env_secret, redact

MAX_RETRY_AFTER_S = 60.0
"""Longest ``Retry-After`` honoured; a server asking for more is waited on this long."""


class TargetError(Exception):
    """The target gave no usable answer for one case; the sample becomes an error row."""


class TargetConfigError(TargetError, InputError):
    """The target spec or its options are wrong; nothing can be run (exit code 2)."""


@dataclass(frozen=True)
class TurnReply:
    """The assistant's reply at one turn of a conversation, and what it cost."""

    turn: int
    """Position of the turn in the conversation, from 1."""
    content: str
    """The reply (untrusted text)."""
    generated: bool = False
    """True when the target produced it; False for a recorded reply."""
    latency_ms: float | None = None
    """Wall time of the target call."""
    input_tokens: int | None = None
    """Tokens sent (the whole history)."""
    output_tokens: int | None = None
    """Tokens produced."""
    cost_usd: float = 0.0
    """Cost of the call in US dollars."""
    calls: int = 0
    """HTTP requests made, retries included."""


@dataclass(frozen=True)
class TargetResponse:
    """What a target answered for one case, and what it cost."""

    text: str
    """The response to score."""
    contexts: tuple[str, ...] | None = None
    """Passages the target says it retrieved; None when it returned none."""
    context_ids: tuple[str, ...] | None = None
    """Ids (or URLs) of ``contexts``, one each in the same (rank) order; None when the
    target named no ids (the retrieval metrics then match passages by text)."""
    latency_ms: float | None = None
    """Wall time of the successful call (None for recorded responses)."""
    input_tokens: int | None = None
    """Tokens sent to the target model, when it reports them."""
    output_tokens: int | None = None
    """Tokens the target model produced, when it reports them."""
    cost_usd: float = 0.0
    """Cost of the call in US dollars (0 when unknown or free)."""
    calls: int = 0
    """HTTP requests made, retries included."""
    turns: tuple[TurnReply, ...] = ()
    """For a conversation: the assistant's reply at each assistant turn, in order (``text``
    is then the whole transcript)."""


@runtime_checkable
class Target(Protocol):
    """Something that answers test cases."""

    @property
    def name(self) -> str:
        """Recorded with the run: ``recorded``, ``openai:gpt-4o-mini@system.v1``, ``http:URL``."""
        ...

    async def respond(self, case: TestCase) -> TargetResponse:
        """Answer one case; raises ``TargetError`` when no answer can be had."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


DEFAULT_POLICY = RetryPolicy()
"""Two retries, 60 s per request, 0.5 s first backoff."""


def retry_after_seconds(value: str | None) -> float | None:
    """Seconds asked by a ``Retry-After`` header, at most ``MAX_RETRY_AFTER_S``."""
    return _retry_after_seconds(value, cap=MAX_RETRY_AFTER_S)


async def request_json(
    session: HttpSession,
    url: str,
    *,
    body: bytes,
    headers: Mapping[str, str],
    policy: RetryPolicy,
    what: str,
    method: str = "POST",
) -> Sent[Any]:
    """Send ``body`` (GET sends none) with :func:`engine.http.send_with_retries` and parse
    the JSON answer. Raises ``TargetError`` naming ``what``, secrets masked."""
    try:
        return await send_with_retries(
            session,
            url,
            policy=policy,
            parse=parse_json,
            method=method,
            content=None if method == "GET" else body,
            headers=headers,
            label=what,
        )
    except SendError as err:
        raise TargetError(redact(f"{what}: {err}")) from None


ENV_PLACEHOLDER = re.compile(r"\{\{\s*env\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
"""``{{env.NAME}}``: a value taken from the environment when the target is built."""


def fill_env(text: str, where: str) -> str:
    """``text`` with each ``{{env.NAME}}`` replaced by that variable, which is registered
    as a secret (:mod:`engine.secrets`). Raises TargetConfigError naming ``where`` when a
    variable is unset."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        found = env_secret(name)
        if found is None:
            raise TargetConfigError(f"{where} needs environment variable {name}, unset")
        return found

    return ENV_PLACEHOLDER.sub(value, text)


def session_for(concurrency: int | None) -> HttpSession:
    """The HTTP session of a target: one client per event loop with ``concurrency``
    connections kept alive."""
    return HttpSession(max_connections=concurrency)
