"""Targets: where a run's responses come from (``recorded``, ``openai:MODEL``, ``http:URL``).

``build_target(spec, options=..., http=..., retries=...)`` turns the run's ``--target``
spec and its typed options (``RunConfig.target_options`` and ``RunConfig.http``) into a
``Target``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from engine.http import RetryPolicy
from engine.models import HttpEndpointOptions, TargetOptions, nest_options
from engine.targets.base import (
    Target,
    TargetConfigError,
    TargetError,
    TargetResponse,
    TurnReply,
)
from engine.targets.http_endpoint import HttpEndpointTarget
from engine.targets.openai_chat import OpenAIChatTarget
from engine.targets.recorded import RecordedTarget

__all__ = [
    "RetryPolicy",
    "Target",
    "TargetConfigError",
    "TargetError",
    "TargetResponse",
    "TurnReply",
    "build_target",
    "options_from_flat",
]


_NUMBER_ERRORS = frozenset({"float_parsing", "float_type", "int_parsing", "int_type"})


def options_from_flat(
    flat: Mapping[str, Any],
) -> tuple[TargetOptions, HttpEndpointOptions]:
    """Target and HTTP options from flat option names (``target_timeout_s=5``), as
    ``--option`` takes them. Raises TargetConfigError naming a key or value that is wrong."""
    try:
        nested = nest_options(flat)
        return (
            TargetOptions.model_validate(nested.get("target_options", {})),
            HttpEndpointOptions.model_validate(nested.get("http", {})),
        )
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = next((k for k in flat if k.endswith(str(problem["loc"][-1]))), problem["loc"][-1])
        if problem["type"] in _NUMBER_ERRORS:
            message = f"option {where} must be a number, got {problem['input']!r}"
        else:
            message = f"option {where}: {problem['msg']}"
        raise TargetConfigError(message) from exc
    except ValueError as exc:
        raise TargetConfigError(str(exc)) from exc


def build_target(
    spec: str,
    *,
    options: TargetOptions | None = None,
    http: HttpEndpointOptions | None = None,
    retries: int = 2,
    extra: Mapping[str, Any] | None = None,
    concurrency: int | None = None,
) -> Target:
    """The target named by ``spec``; ``TargetConfigError`` when the spec is not valid.

    ``extra`` takes the options by their flat ``--option`` names instead (scripts, tests);
    ``retries`` are the retries of each HTTP call after its first attempt; ``concurrency``
    (the run's calls in flight) sizes the connection pool."""
    if extra is not None:
        options, http = options_from_flat(extra)
    options = options or TargetOptions()
    http = http or HttpEndpointOptions()
    policy = RetryPolicy(retries=retries, timeout_s=options.timeout_s, backoff_s=options.backoff_s)
    if spec == "recorded":
        return RecordedTarget()
    if spec.startswith("openai:"):
        prices = None
        if options.price_in is not None or options.price_out is not None:
            prices = (options.price_in or 0.0, options.price_out or 0.0)
        return OpenAIChatTarget(
            spec.removeprefix("openai:"),
            prompt=options.prompt,
            temperature=options.temperature,
            include_context=options.include_context,
            prices=prices,
            policy=policy,
            concurrency=concurrency,
        )
    if spec.startswith(("http:", "https:")):
        # Both "http:https://host/x" (the spec form) and a bare "https://host/x" are accepted.
        url = spec if spec.startswith(("http://", "https://")) else spec.removeprefix("http:")
        return HttpEndpointTarget(
            url,
            body_template=http.body,
            answer_path=http.answer_path,
            contexts_path=http.contexts_path,
            headers=http.headers,
            policy=policy,
            concurrency=concurrency,
        )
    raise TargetConfigError(f"unknown target {spec!r}; use recorded, openai:MODEL or http:URL")
