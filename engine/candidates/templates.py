"""Templates of candidate files: ``{{input}}``, ``{{context}}``, ``{{expected}}``,
``{{metadata.FIELD}}``, rendered per case."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from engine.models import TestCase

TEMPLATE_RE = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
"""A template variable: ``{{ name }}`` (spaces inside the braces are allowed)."""

_METADATA_RE = re.compile(r"^metadata(\.[A-Za-z_][A-Za-z0-9_-]*)+$")
_ALLOWED = ("input", "context", "expected")
ALLOWED_TEXT = "{{input}}, {{context}}, {{expected}} and {{metadata.FIELD}}"


class CaseTemplateError(Exception):
    """A template cannot be rendered for one case (a metadata field the case lacks)."""


# --------------------------------------------------------------------------- templates


def template_variables(template: str) -> list[str]:
    """The variables of ``template`` in order of appearance (duplicates kept)."""
    return [m.group(1) for m in TEMPLATE_RE.finditer(template)]


def unknown_variables(template: str) -> list[str]:
    """The variables of ``template`` that are not allowed, each once."""
    bad = [
        v for v in template_variables(template) if v not in _ALLOWED and not _METADATA_RE.match(v)
    ]
    return list(dict.fromkeys(bad))


def _metadata_value(case: TestCase, variable: str, owner: str) -> Any:
    value: Any = case.metadata
    path = variable.split(".")[1:]
    for depth, key in enumerate(path):
        if not isinstance(value, Mapping) or key not in value:
            missing = ".".join(path[: depth + 1])
            raise CaseTemplateError(
                f"case {case.id!r}: {owner} uses {{{{{variable}}}}}, but the case's metadata "
                f"has no field {missing!r}"
            )
        value = value[key]
    return value


def as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def variable_value(case: TestCase, variable: str, owner: str = "the template") -> Any:
    """The value of one allowed template variable for ``case`` (text, or metadata as is)."""
    if variable == "input":
        return case.query
    if variable == "context":
        return "\n\n".join(case.effective_context)
    if variable == "expected":
        return case.expected_answer.text
    if _METADATA_RE.match(variable):
        return _metadata_value(case, variable, owner)
    raise CaseTemplateError(f"{owner}: unknown template variable {{{{{variable}}}}}")


def render_template(template: str, case: TestCase, owner: str = "the template") -> str:
    """Replace every variable of ``template`` with its text for ``case``.

    Raises CaseTemplateError when the case lacks a metadata field the template uses.
    """
    return TEMPLATE_RE.sub(lambda m: as_text(variable_value(case, m.group(1), owner)), template)


def render_json_template(template: str, case: TestCase, owner: str = "the template") -> str:
    """Render a JSON body: a variable inside quotes is escaped as string content, a bare
    one becomes a JSON value, so inputs with quotes or newlines keep the body valid."""

    def one(match: re.Match[str]) -> str:
        value = variable_value(case, match.group(1), owner)
        start, end = match.span()
        quoted = template[start - 1 : start] == '"' and template[end : end + 1] == '"'
        text = json.dumps(value if not quoted else as_text(value), ensure_ascii=False)
        return text[1:-1] if quoted else text

    return TEMPLATE_RE.sub(one, template)
