"""The ``http:URL`` target: POST each case to a live endpoint (a RAG pipeline, say).

As the harness write-up's HTTP-endpoint candidates: a JSON body template with
placeholders, and JSON paths to the answer and, optionally, the retrieved contexts.

Body template (``extra["http_body"]``, default ``{"query": "{{query}}"}``) must be valid
JSON with placeholders inside strings. A string that is exactly one placeholder is
replaced by the value itself (so ``"{{context}}"`` becomes a JSON array); elsewhere the
value is inserted as text. Placeholders: ``{{query}}`` (alias ``{{input}}``), ``{{id}}``,
``{{domain}}``, ``{{expected}}``, ``{{context}}``, ``{{metadata.KEY}}`` (dotted for nested
keys). Header values (``extra["http_headers"]``), the body template and the URL may use
``{{env.NAME}}`` so secrets stay in the environment; every such value, and a password in
the URL (``https://user:pass@host``), is registered with :mod:`engine.secrets` and masked in
every error text.

JSON paths: ``$.answer``, ``answer``, ``data.choices[0].text``, ``$.chunks[*].content``
(``[*]`` maps over a list). Without ``http_answer_path`` the answer is the first text of
``answer``, ``output``, ``response``, ``text``, ``result``. Contexts
(``http_contexts_path``) may be strings or objects with ``content``/``text``/
``page_content``; objects that all name an ``id`` (or ``doc_id``, ``chunk_id``, ``url``,
``source``, also under ``metadata``) keep those ids in rank order for the retrieval
metrics, so point the path at the objects (``$.chunks``), not at their text.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from typing import Any

from engine.http import RetryPolicy
from engine.models import TestCase
from engine.scoring.retrieval import passage_id
from engine.secrets import redact_url, register_url
from engine.targets.base import (
    DEFAULT_POLICY,
    ENV_PLACEHOLDER,
    TargetConfigError,
    TargetError,
    TargetResponse,
    fill_env,
    request_json,
    session_for,
)

DEFAULT_BODY = '{"query": "{{query}}"}'
ANSWER_FIELDS = ("answer", "output", "response", "text", "result")
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}")
_NAMES = {"query", "input", "id", "domain", "expected", "context"}
_STEP = re.compile(r"([^.\[\]]+)|\[(\d+|\*)\]")


class JsonPath:
    """A small JSON path: dotted keys, ``[n]`` indexes and ``[*]`` over lists."""

    def __init__(self, text: str) -> None:
        self.text = text
        body = text.strip()
        if body.startswith("$"):
            body = body[1:].lstrip(".")
        steps: list[str | int | None] = []
        pos = 0
        while pos < len(body):
            if body[pos] == ".":
                pos += 1
                continue
            match = _STEP.match(body, pos)
            if match is None:
                raise TargetConfigError(f"bad JSON path {text!r} at character {pos}")
            key, index = match.groups()
            if key is not None:
                steps.append(key)
            else:
                steps.append(None if index == "*" else int(index))
            pos = match.end()
        if not steps:
            raise TargetConfigError(f"empty JSON path {text!r}")
        self.steps = tuple(steps)

    def find(self, payload: Any) -> Any:
        """The value at the path; a ``[*]`` step yields a list. Raises KeyError when absent."""
        return self._walk(payload, 0)

    def _walk(self, node: Any, i: int) -> Any:
        if i == len(self.steps):
            return node
        step = self.steps[i]
        if step is None:
            if not isinstance(node, list):
                raise KeyError(f"{self.text}: [*] needs a list")
            return [self._walk(item, i + 1) for item in node]
        if isinstance(step, int):
            if not isinstance(node, list) or step >= len(node):
                raise KeyError(f"{self.text}: no element [{step}]")
            return self._walk(node[step], i + 1)
        if not isinstance(node, dict) or step not in node:
            raise KeyError(f"{self.text}: no key {step!r}")
        return self._walk(node[step], i + 1)


def _metadata_value(case: TestCase, dotted: str) -> Any:
    node: Any = case.metadata
    for key in dotted.split("."):
        if not isinstance(node, Mapping) or key not in node:
            raise TargetError(f"case {case.id!r}: metadata has no {dotted!r} for the body template")
        node = node[key]
    return node


def placeholder_value(case: TestCase, name: str) -> Any:
    """The value of one body-template placeholder for ``case``."""
    if name in ("query", "input"):
        return case.query
    if name == "id":
        return case.id
    if name == "domain":
        return case.domain
    if name == "expected":
        return case.expected_answer.text
    if name == "context":
        return list(case.effective_context)
    if name.startswith("metadata."):
        return _metadata_value(case, name.removeprefix("metadata."))
    raise TargetError(f"unknown placeholder {{{{{name}}}}}")


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n\n".join(value)
    return json.dumps(value, ensure_ascii=False)


class BodyTemplate:
    """A JSON body with ``{{...}}`` placeholders, checked when built."""

    def __init__(self, template: str) -> None:
        try:
            self.shape = json.loads(template)
        except json.JSONDecodeError as exc:
            raise TargetConfigError(
                f"http body template is not valid JSON ({exc.msg} at column {exc.colno}); "
                'keep placeholders inside quotes, e.g. {"query": "{{query}}"}'
            ) from exc
        for name in _PLACEHOLDER.findall(template):
            if name not in _NAMES and not name.startswith(("metadata.", "env.")):
                raise TargetConfigError(
                    f"unknown placeholder {{{{{name}}}}} in the http body template; use "
                    "{{query}}, {{input}}, {{id}}, {{domain}}, {{expected}}, {{context}}, "
                    "{{metadata.KEY}} or {{env.NAME}}"
                )
        # Environment values are filled in once, here, so a missing variable stops the
        # run before the first call and the values are registered as secrets.
        self.shape = _fill_env_in(self.shape)

    def render(self, case: TestCase) -> Any:
        """The body for ``case`` as a JSON-ready value."""
        return self._fill(copy.deepcopy(self.shape), case)

    def _fill(self, node: Any, case: TestCase) -> Any:
        if isinstance(node, str):
            whole = _PLACEHOLDER.fullmatch(node.strip())
            if whole:
                return placeholder_value(case, whole.group(1))
            return _PLACEHOLDER.sub(lambda m: _as_text(placeholder_value(case, m.group(1))), node)
        if isinstance(node, list):
            return [self._fill(item, case) for item in node]
        if isinstance(node, dict):
            return {self._fill(k, case): self._fill(v, case) for k, v in node.items()}
        return node


def _fill_env_in(node: Any) -> Any:
    if isinstance(node, str):
        return fill_env(node, "the http body template") if ENV_PLACEHOLDER.search(node) else node
    if isinstance(node, list):
        return [_fill_env_in(item) for item in node]
    if isinstance(node, dict):
        return {_fill_env_in(k): _fill_env_in(v) for k, v in node.items()}
    return node


def _context_text(item: Any) -> str | None:
    if isinstance(item, str):
        return item
    if isinstance(item, dict):
        for key in ("content", "text", "page_content", "chunk", "passage"):
            if isinstance(item.get(key), str):
                return str(item[key])
    return None


def _render_headers(headers: Mapping[str, str]) -> dict[str, str]:
    def check(value: str) -> str:
        for name in _PLACEHOLDER.findall(value):
            if not name.startswith("env."):
                raise TargetConfigError(f"http headers may only use {{{{env.NAME}}}}, not {name!r}")
        return fill_env(value, "http header")

    return {str(k): check(str(v)) for k, v in headers.items()}


class HttpEndpointTarget:
    """POSTs a templated JSON body to ``url`` and reads the answer by JSON path."""

    def __init__(
        self,
        url: str,
        *,
        body_template: str = DEFAULT_BODY,
        answer_path: str | None = None,
        contexts_path: str | None = None,
        headers: Mapping[str, str] | None = None,
        policy: RetryPolicy = DEFAULT_POLICY,
        concurrency: int | None = None,
    ) -> None:
        if not url.startswith(("http://", "https://")):
            raise TargetConfigError(
                f"http target needs an http:// or https:// URL, got {redact_url(url)!r} "
                "(use --target http:https://host/path)"
            )
        register_url(url)
        self.url = redact_url(url)
        """The URL as recorded and printed: credentials and secrets masked."""
        self._send_url = fill_env(url, "the http target URL")
        register_url(self._send_url)
        self.body = BodyTemplate(body_template)
        self.answer_path = JsonPath(answer_path) if answer_path else None
        self.contexts_path = JsonPath(contexts_path) if contexts_path else None
        self.headers = {"Content-Type": "application/json", **_render_headers(headers or {})}
        self.policy = policy
        self._session = session_for(concurrency)

    @property
    def name(self) -> str:
        """``http:URL`` (credentials in the URL masked)."""
        return f"http:{self.url}"

    def _answer(self, payload: Any, what: str) -> str:
        if self.answer_path is not None:
            try:
                value = self.answer_path.find(payload)
            except KeyError as exc:
                raise TargetError(f"{what}: answer path {exc.args[0]}") from exc
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                return "\n".join(value)
            if not isinstance(value, str):
                raise TargetError(
                    f"{what}: answer path {self.answer_path.text} holds {type(value).__name__}, "
                    "not text"
                )
            return value
        if isinstance(payload, str):
            return payload
        if isinstance(payload, dict):
            for key in ANSWER_FIELDS:
                if isinstance(payload.get(key), str):
                    return str(payload[key])
        raise TargetError(
            f"{what}: no answer in the reply (looked for {', '.join(ANSWER_FIELDS)}); "
            "set http_answer_path, e.g. $.data.answer"
        )

    def _contexts(
        self, payload: Any, what: str
    ) -> tuple[tuple[str, ...] | None, tuple[str, ...] | None]:
        """The passages at the contexts path, and their ids when every passage names one."""
        if self.contexts_path is None:
            return None, None
        try:
            value = self.contexts_path.find(payload)
        except KeyError as exc:
            raise TargetError(f"{what}: contexts path {exc.args[0]}") from exc
        items = value if isinstance(value, list) else [value]
        out = []
        for item in items:
            text = _context_text(item)
            if text is None:
                raise TargetError(
                    f"{what}: contexts path {self.contexts_path.text} holds "
                    f"{type(item).__name__} items, not text or objects with 'content'/'text'"
                )
            out.append(text)
        ids = [passage_id(item) for item in items]
        named = tuple(i for i in ids if i is not None)
        return tuple(out), named if len(named) == len(out) else None

    async def respond(self, case: TestCase) -> TargetResponse:
        """POST the case and extract the answer (and contexts when configured)."""
        what = f"target {self.name} on case {case.id!r}"
        body = json.dumps(self.body.render(case), ensure_ascii=False).encode("utf-8")
        result = await request_json(
            self._session,
            self._send_url,
            body=body,
            headers=self.headers,
            policy=self.policy,
            what=what,
        )
        contexts, context_ids = self._contexts(result.value, what)
        return TargetResponse(
            text=self._answer(result.value, what),
            contexts=contexts,
            context_ids=context_ids,
            latency_ms=result.latency_ms,
            calls=result.attempts,
        )

    async def aclose(self) -> None:
        """Close the HTTP connections this target opened."""
        await self._session.aclose()
