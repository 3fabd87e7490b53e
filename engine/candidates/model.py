"""The candidate record: front matter, endpoint, recommended graders, output paths."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, Literal
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field, field_validator

from engine.candidates.templates import (
    TEMPLATE_RE,
    as_text,
    render_json_template,
    render_template,
    variable_value,
)
from engine.graders.spec import check_id
from engine.models import Frozen, TestCase

RunnerKind = Literal["llm_prompt", "http_endpoint"]

RESPONSE_FIELDS: tuple[str, ...] = ("output", "response", "text", "result", "answer")
"""Fields an endpoint's JSON answer is read from, in order, when no path is configured.
The first four are the write-up's; ``answer`` is what its own RAG example returns."""


class EndpointResponseError(Exception):
    """An endpoint's answer holds no output where the candidate says it is."""


# --------------------------------------------------------------------------- graders


class RecommendedGrader(Frozen):
    """A grader a candidate asks for, with its weight in the candidate's weighted score."""

    grader: str
    """Grader id (a file of ``graders/`` or a built-in name)."""
    weight: float = 1.0
    """Weight, >= 0."""


def _weight(name: str, raw: Any) -> float:
    if raw is None:
        return 1.0
    if isinstance(raw, bool):
        raise ValueError(f"grader {name!r} has a weight that is not a number: {raw!r}")
    try:
        weight = float(raw)
    except (TypeError, ValueError):
        raise ValueError(f"grader {name!r} has a weight that is not a number: {raw!r}") from None
    if math.isnan(weight) or math.isinf(weight) or weight < 0:
        raise ValueError(f"grader {name!r} has weight {raw!r}; use a number >= 0")
    return weight


def _pair(item: str) -> tuple[str, Any]:
    name, sep, weight = item.partition(":")
    return name.strip(), (weight.strip() if sep else None)


def parse_recommended_graders(value: Any) -> tuple[RecommendedGrader, ...]:
    """Read ``recommended_graders`` in any of its forms; raises ValueError.

    The write-up's string ``"faithfulness:0.6, llm-judge-helpful:0.4"``, a mapping
    ``{faithfulness: 0.6}``, or a list of ``"name:weight"``, ``"name"`` or one-key
    mappings. A grader without a weight weighs 1.
    """
    pairs: list[tuple[str, Any]] = []
    if value is None:
        return ()
    if isinstance(value, str):
        pairs = [_pair(item) for item in value.split(",") if item.strip()]
    elif isinstance(value, Mapping):
        pairs = [(str(k).strip(), v) for k, v in value.items()]
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, str):
                pairs.append(_pair(item))
            elif isinstance(item, Mapping) and len(item) == 1:
                ((k, v),) = item.items()
                pairs.append((str(k).strip(), v))
            else:
                raise ValueError(f"cannot read {item!r}: use 'name:weight' or {{name: weight}}")
    else:
        raise ValueError("use 'name:weight, name:weight', a mapping of name to weight, or a list")
    out: dict[str, RecommendedGrader] = {}
    for name, raw in pairs:
        if not name:
            raise ValueError("a grader name is empty")
        check_id(name)
        if name in out:
            raise ValueError(f"grader {name!r} is listed twice")
        out[name] = RecommendedGrader(grader=name, weight=_weight(name, raw))
    return tuple(out.values())


# --------------------------------------------------------------------------- models


class HttpEndpoint(Frozen):
    """How an ``http_endpoint`` candidate calls its service."""

    url: str
    """Where to send the request; may hold template variables (URL-encoded when rendered)."""
    method: Literal["GET", "POST"] = "POST"
    """HTTP method; GET sends no body."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Extra request headers."""
    body_template: str = '{"query": "{{input}}"}'
    """JSON body with template variables (the write-up's default shape)."""
    response_path: str | None = None
    """Dotted path of the answer in the JSON reply (``data.answer``, ``choices.0.text``)."""
    timeout_s: float = 60.0
    """Seconds to wait for the reply."""


class CandidateFrontMatter(BaseModel):
    """The front matter of a candidate file, as written."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    name: str | None = None
    """Human name; the id when absent."""
    description: str = ""
    """What the candidate is for."""
    runner: RunnerKind = "llm_prompt"
    """``llm_prompt`` (call the target model) or ``http_endpoint`` (call a service)."""
    user_template: str = "{{input}}"
    """The user message; the body of the file is the system prompt."""
    provider: str | None = None
    """Provider override (``openai``, ``anthropic``, ``ollama``)."""
    model: str | None = None
    """Model override."""
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    """Temperature override."""
    max_tokens: int | None = Field(default=None, ge=1)
    """Output token limit."""
    recommended_graders: tuple[RecommendedGrader, ...] = ()
    """Graders and weights (``faithfulness:0.6, llm-judge-helpful:0.4``)."""
    recommended_datasets: tuple[str, ...] = ()
    """Test sets the candidate is designed for (for people)."""
    grader_rationale: str = ""
    """Why these weights (for people)."""
    notes: str = ""
    """Experiment notes (for people)."""
    variant_label: str | None = None
    """Short label of a variant; the file stem when absent."""
    parent: str | None = None
    """Id of the candidate this one was derived from (``candidates vary`` writes it); the
    family's base when absent."""
    edit: dict[str, Any] | None = None
    """How it was derived from ``parent`` (``{kind: ablate, removed: ...}``)."""
    endpoint_url: str | None = None
    """http_endpoint: the URL."""
    endpoint_method: Literal["GET", "POST"] = "POST"
    """http_endpoint: GET or POST."""
    endpoint_headers: dict[str, str] | None = None
    """http_endpoint: headers, as a mapping or the write-up's JSON string."""
    endpoint_body_template: str | None = None
    """http_endpoint: JSON body with template variables."""
    endpoint_response_path: str | None = None
    """http_endpoint: dotted path of the answer in the JSON reply."""
    endpoint_timeout: float = Field(default=60.0, gt=0.0)
    """http_endpoint: seconds to wait."""

    @field_validator("recommended_graders", mode="before")
    @classmethod
    def _graders(cls, value: Any) -> tuple[RecommendedGrader, ...]:
        return parse_recommended_graders(value)

    @field_validator("recommended_datasets", mode="before")
    @classmethod
    def _datasets(cls, value: Any) -> Any:
        if value is None:
            return ()
        if isinstance(value, str):
            return tuple(v.strip() for v in value.split(",") if v.strip())
        return value

    @field_validator("endpoint_headers", mode="before")
    @classmethod
    def _headers(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as err:
                raise ValueError(f"a JSON string of headers must be valid JSON: {err.msg}") from err
        if isinstance(value, Mapping):
            return {str(k): str(v) for k, v in value.items()}
        return value


class Candidate(Frozen):
    """A prompt variant (or an endpoint) evaluated on a test set."""

    id: str
    """``family`` for base.md, ``family-stem`` for a variant."""
    family: str
    """The folder the file is in."""
    parent: str | None = None
    """The candidate it derives from: the front matter's ``parent``, else the family's base
    id for a variant; None for a base."""
    edit: str = ""
    """How it derives from ``parent``, as canonical JSON (``candidates vary``); empty when
    the file records none."""
    variant_label: str | None = None
    """Short label of a variant (the file stem unless the file gives one)."""
    name: str
    """Human name."""
    description: str = ""
    """What the candidate is for."""
    runner: RunnerKind = "llm_prompt"
    """``llm_prompt`` or ``http_endpoint``."""
    system_prompt: str = ""
    """The body of the file (may hold template variables)."""
    user_template: str = "{{input}}"
    """The user message template."""
    provider: str | None = None
    """Provider override."""
    model: str | None = None
    """Model override."""
    temperature: float | None = None
    """Temperature override."""
    max_tokens: int | None = None
    """Output token limit."""
    recommended_graders: tuple[RecommendedGrader, ...] = ()
    """Graders and their weights."""
    recommended_datasets: tuple[str, ...] = ()
    """Test sets the candidate is designed for."""
    grader_rationale: str = ""
    """Why these weights."""
    notes: str = ""
    """Experiment notes."""
    endpoint: HttpEndpoint | None = None
    """How to call the service (http_endpoint only)."""
    source: str = ""
    """The file it came from."""

    def render_user(self, case: TestCase) -> str:
        """The user message for ``case``. Raises CaseTemplateError (missing metadata)."""
        return render_template(self.user_template, case, f"candidate {self.id!r} user_template")

    def render_system(self, case: TestCase) -> str:
        """The system prompt for ``case``. Raises CaseTemplateError (missing metadata)."""
        return render_template(self.system_prompt, case, f"candidate {self.id!r} system prompt")

    def render_body(self, case: TestCase) -> str:
        """The JSON request body of an http_endpoint candidate for ``case``."""
        if self.endpoint is None:
            raise ValueError(f"candidate {self.id!r} is not an http_endpoint")
        return render_json_template(
            self.endpoint.body_template, case, f"candidate {self.id!r} endpoint_body_template"
        )

    def render_url(self, case: TestCase) -> str:
        """The request URL of an http_endpoint candidate, variables URL-encoded."""
        if self.endpoint is None:
            raise ValueError(f"candidate {self.id!r} is not an http_endpoint")
        owner = f"candidate {self.id!r} endpoint_url"
        return TEMPLATE_RE.sub(
            lambda m: quote(as_text(variable_value(case, m.group(1), owner)), safe=""),
            self.endpoint.url,
        )

    def extract_output(self, payload: Any) -> str:
        """The answer in an endpoint's reply (decoded JSON, or text). Raises
        EndpointResponseError."""
        path = self.endpoint.response_path if self.endpoint is not None else None
        return extract_output(payload, path)

    def grader_weights(self) -> dict[str, float]:
        """Recommended grader id -> weight (empty when the file recommends none)."""
        return {g.grader: g.weight for g in self.recommended_graders}


def extract_output(payload: Any, path: str | None = None) -> str:
    """The answer in an endpoint reply: at ``path`` (dotted, list indices as numbers) or
    the first text field of ``RESPONSE_FIELDS``. Raises EndpointResponseError."""
    if path:
        value = payload
        walked: list[str] = []
        for key in path.split("."):
            walked.append(key)
            if isinstance(value, Mapping) and key in value:
                value = value[key]
            elif (
                isinstance(value, list)
                and key.lstrip("-").isdigit()
                and -len(value) <= int(key) < len(value)
            ):
                value = value[int(key)]
            else:
                raise EndpointResponseError(
                    f"the reply has nothing at {'.'.join(walked)!r} (response path {path!r})"
                )
        return as_text(value)
    if isinstance(payload, str):
        return payload
    if isinstance(payload, Mapping):
        for key in RESPONSE_FIELDS:
            if isinstance(payload.get(key), str):
                return str(payload[key])
        keys = ", ".join(repr(k) for k in list(payload)[:10])
        raise EndpointResponseError(
            f"the reply has none of the fields {', '.join(RESPONSE_FIELDS)} (it has {keys}); "
            "set endpoint_response_path"
        )
    raise EndpointResponseError(
        f"the reply is a JSON {type(payload).__name__}; set endpoint_response_path"
    )
