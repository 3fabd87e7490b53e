"""Targets: where a run's responses come from (``recorded``, ``openai:MODEL``, ``http:URL``).

``build_target(spec, extra=..., retries=...)`` turns the run's ``--target`` spec and the
``RunConfig.extra`` options into a ``Target``. Options read from ``extra``:

- ``target_timeout_s`` (60), ``target_backoff_s`` (0.5): per-request time limit and
  first backoff of HTTP targets;
- ``target_prompt`` (``v1`` or a file path), ``target_temperature`` (0),
  ``target_include_context`` (false), ``target_price_in`` / ``target_price_out`` (US
  dollars per million tokens): the ``openai`` target;
- ``http_body``, ``http_answer_path``, ``http_contexts_path``, ``http_headers``: the
  ``http`` target (see ``engine.targets.http_endpoint``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.http import RetryPolicy
from engine.targets.base import (
    Target,
    TargetConfigError,
    TargetError,
    TargetResponse,
)
from engine.targets.http_endpoint import DEFAULT_BODY, HttpEndpointTarget
from engine.targets.openai_chat import DEFAULT_PROMPT, OpenAIChatTarget
from engine.targets.recorded import RecordedTarget

__all__ = [
    "RetryPolicy",
    "Target",
    "TargetConfigError",
    "TargetError",
    "TargetResponse",
    "build_target",
]


def _float(extra: Mapping[str, Any], key: str, default: float) -> float:
    value = extra.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TargetConfigError(f"option {key} must be a number, got {value!r}")
    return float(value)


def build_target(
    spec: str,
    *,
    extra: Mapping[str, Any] | None = None,
    retries: int = 2,
    concurrency: int | None = None,
) -> Target:
    """The target named by ``spec``; ``TargetConfigError`` when the spec is not valid.

    ``retries`` are the retries of each HTTP call after its first attempt; ``concurrency``
    (the run's calls in flight) sizes the connection pool, which otherwise keeps up to
    100 connections alive."""
    extra = extra or {}
    policy = RetryPolicy(
        retries=retries,
        timeout_s=_float(extra, "target_timeout_s", 60.0),
        backoff_s=_float(extra, "target_backoff_s", 0.5),
    )
    if spec == "recorded":
        return RecordedTarget()
    if spec.startswith("openai:"):
        prices = None
        if "target_price_in" in extra or "target_price_out" in extra:
            prices = (_float(extra, "target_price_in", 0.0), _float(extra, "target_price_out", 0.0))
        return OpenAIChatTarget(
            spec.removeprefix("openai:"),
            prompt=str(extra.get("target_prompt", DEFAULT_PROMPT)),
            temperature=_float(extra, "target_temperature", 0.0),
            include_context=bool(extra.get("target_include_context", False)),
            prices=prices,
            policy=policy,
            concurrency=concurrency,
        )
    if spec.startswith(("http:", "https:")):
        # Both "http:https://host/x" (the spec form) and a bare "https://host/x" are accepted.
        url = spec if spec.startswith(("http://", "https://")) else spec.removeprefix("http:")
        headers = extra.get("http_headers") or {}
        if not isinstance(headers, Mapping):
            raise TargetConfigError("option http_headers must be an object of header: value")
        return HttpEndpointTarget(
            url,
            body_template=str(extra.get("http_body", DEFAULT_BODY)),
            answer_path=extra.get("http_answer_path"),
            contexts_path=extra.get("http_contexts_path"),
            headers=headers,
            policy=policy,
            concurrency=concurrency,
        )
    raise TargetConfigError(f"unknown target {spec!r}; use recorded, openai:MODEL or http:URL")
