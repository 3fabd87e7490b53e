"""Targets built from candidate files (``candidates/<family>/<name>.md``).

* ``llm_prompt``: the OpenAI-compatible chat target with the candidate's system prompt
  (the file's body) and user message (``user_template``), both rendered per case, and the
  candidate's model, temperature and token limit. A candidate without a model uses the
  run's ``--target openai:MODEL``.
* ``http_endpoint``: the candidate's URL, method, headers and JSON body template,
  rendered per case and sent with the shared retry policy; the answer is read where the
  candidate says (``endpoint_response_path``) or from the usual fields.

Everything that can be wrong with a candidate's target is raised as ``TargetConfigError``
while the targets are built, before any call.
"""

from __future__ import annotations

from typing import Any

from engine.candidates import Candidate, CaseTemplateError, EndpointResponseError
from engine.http import RetryPolicy
from engine.models import TargetOptions, TestCase
from engine.pricing import PriceTable
from engine.secrets import redact_url, register_url
from engine.targets.base import (
    DEFAULT_POLICY,
    Target,
    TargetConfigError,
    TargetError,
    TargetResponse,
    fill_env,
    request_json,
    session_for,
)
from engine.targets.openai_chat import OpenAIChatTarget, conversation_turn

OPENAI_WIRE_PROVIDERS = frozenset({"openai", "ollama", "vllm", "lmstudio", "openai-compatible"})
"""Providers a candidate may name: they all speak the OpenAI chat-completions wire format
(the base URL comes from ``OPENAI_BASE_URL``)."""


class CandidateChatTarget(OpenAIChatTarget):
    """Chat completions with a candidate's rendered system prompt and user message."""

    def __init__(
        self,
        candidate: Candidate,
        model: str,
        *,
        temperature: float = 0.0,
        prices: tuple[float, float] | None = None,
        policy: RetryPolicy = DEFAULT_POLICY,
        base_url: str | None = None,
        api_key: str | None = None,
        concurrency: int | None = None,
    ) -> None:
        super().__init__(
            model,
            base_url=base_url,
            api_key=api_key,
            temperature=temperature,
            prices=prices,
            policy=policy,
            concurrency=concurrency,
        )
        self.candidate = candidate
        # The recorded name says which prompt answered: the candidate id, not system.v1.
        self.prompt_label = candidate.id
        self.system_prompt = candidate.system_prompt

    def request_body(self, case: TestCase) -> dict[str, Any]:
        """The chat-completions request: rendered system prompt (left out when the file's
        body is empty) and user template. A turn of a conversation also sends the chatbot
        role and the history so far, its last user message rendered through the user
        template (``{{input}}`` is that message), as the candidate would phrase it. Raises
        TargetError when a template cannot be rendered for this case."""
        try:
            system = self.candidate.render_system(case)
            user = self.candidate.render_user(case)
        except CaseTemplateError as err:
            raise TargetError(str(err)) from err
        messages = [{"role": "system", "content": system}] if system.strip() else []
        turn = conversation_turn(case)
        if turn is None:
            messages.append({"role": "user", "content": user})
        else:
            role, history = turn
            messages.extend(role)
            if history and history[-1].get("role") == "user":
                messages.extend([*history[:-1], {"role": "user", "content": user}])
            else:  # an assistant turn right after another: nothing new from the user
                messages.extend(history)
        body: dict[str, Any] = {
            "model": self.model,
            "temperature": self.temperature,
            "messages": messages,
        }
        if self.candidate.max_tokens is not None:
            body["max_tokens"] = self.candidate.max_tokens
        return body


class CandidateEndpointTarget:
    """Calls a candidate's HTTP endpoint with its rendered URL and body."""

    def __init__(
        self,
        candidate: Candidate,
        *,
        policy: RetryPolicy = DEFAULT_POLICY,
        concurrency: int | None = None,
    ) -> None:
        if candidate.endpoint is None:
            raise TargetConfigError(
                f"{candidate.source}: field 'endpoint_url': candidate {candidate.id!r} is an "
                "http_endpoint without an endpoint"
            )
        self.candidate = candidate
        self.endpoint = candidate.endpoint
        # The candidate's own time limit wins over the run's.
        self.policy = RetryPolicy(policy.retries, self.endpoint.timeout_s, policy.backoff_s)
        # Header values may take secrets from the environment ({{env.NAME}}), as the http
        # target's do; they and a password in the URL are registered as secrets.
        where = f"{candidate.source}: field 'endpoint_headers'"
        self.headers = {
            "Content-Type": "application/json",
            **{k: fill_env(v, where) for k, v in self.endpoint.headers.items()},
        }
        register_url(self.endpoint.url)
        self._session = session_for(concurrency)

    @property
    def name(self) -> str:
        """``http:URL@candidate`` (credentials in the URL masked)."""
        return f"http:{redact_url(self.endpoint.url)}@{self.candidate.id}"

    async def respond(self, case: TestCase) -> TargetResponse:
        """Send the case and read the answer from the reply."""
        what = f"candidate {self.candidate.id!r} endpoint on case {case.id!r}"
        try:
            url = self.candidate.render_url(case)
            body = b""
            if self.endpoint.method == "POST":
                body = self.candidate.render_body(case).encode("utf-8")
        except CaseTemplateError as err:
            raise TargetError(str(err)) from err
        register_url(url)
        result = await request_json(
            self._session,
            url,
            body=body,
            headers=self.headers,
            policy=self.policy,
            what=what,
            method=self.endpoint.method,
        )
        try:
            text = self.candidate.extract_output(result.value)
        except EndpointResponseError as err:
            raise TargetError(f"{what}: {err}") from err
        return TargetResponse(text=text, latency_ms=result.latency_ms, calls=result.attempts)

    async def aclose(self) -> None:
        """Close the HTTP connections this target opened."""
        await self._session.aclose()


def candidate_model(candidate: Candidate, run_target: str) -> str:
    """The model an ``llm_prompt`` candidate calls: its own, else the run's
    ``openai:MODEL`` target. Raises TargetConfigError naming the file and field."""
    provider = (candidate.provider or "openai").lower()
    if provider not in OPENAI_WIRE_PROVIDERS:
        raise TargetConfigError(
            f"{candidate.source}: field 'provider': {candidate.provider!r} cannot answer as a "
            f"target; use one that speaks the OpenAI wire format "
            f"({', '.join(sorted(OPENAI_WIRE_PROVIDERS))}) with OPENAI_BASE_URL"
        )
    if candidate.model:
        return candidate.model
    if run_target.startswith("openai:") and run_target.removeprefix("openai:"):
        return run_target.removeprefix("openai:")
    raise TargetConfigError(
        f"{candidate.source}: field 'model': candidate {candidate.id!r} names no model and the "
        f"run's target is {run_target!r}; set 'model:' in the file or run with "
        "--target openai:MODEL"
    )


def build_candidate_target(
    candidate: Candidate,
    run_target: str,
    *,
    options: TargetOptions | None = None,
    retries: int = 2,
    concurrency: int | None = None,
) -> Target:
    """The target that answers for ``candidate``; ``concurrency`` sizes its connection pool
    (calls in flight). Raises TargetConfigError."""
    options = options or TargetOptions()
    policy = RetryPolicy(retries=retries, timeout_s=options.timeout_s, backoff_s=options.backoff_s)
    if candidate.runner == "http_endpoint":
        return CandidateEndpointTarget(candidate, policy=policy, concurrency=concurrency)
    model = candidate_model(candidate, run_target)
    prices = None
    if options.price_in is not None or options.price_out is not None:
        prices = (options.price_in or 0.0, options.price_out or 0.0)
    temperature = (
        candidate.temperature if candidate.temperature is not None else options.temperature
    )
    return CandidateChatTarget(
        candidate,
        model,
        temperature=temperature,
        prices=prices if prices is not None else PriceTable().prices(model) or (0.0, 0.0),
        policy=policy,
        concurrency=concurrency,
    )
