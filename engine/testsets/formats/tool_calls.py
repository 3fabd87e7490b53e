"""Tool calls written by peers, as ``ToolCall`` and ``ExpectedTool``: the one place a
peer's call object is read, so every format and trace reader names bad fields alike.

DeepEval's ``ToolCall`` (``name``, ``input_parameters``, ``output``, ``description``,
``reasoning``; camelCase ``inputParameters`` from Confident AI) and the native
``{name, arguments, output, order}`` are read; an expected call's ``input_parameters`` are
the exact argument values DeepEval's tool correctness compares.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from engine.models import ExpectedTool, ToolCall
from engine.testsets.base import RowError
from engine.testsets.values import list_value

_ARGUMENT_KEYS = ("arguments", "input_parameters", "inputParameters")
"""Where a call object keeps its arguments, native name first."""


def _arguments(item: dict[str, Any], where: str) -> dict[str, Any]:
    key = next((k for k in _ARGUMENT_KEYS if item.get(k) is not None), None)
    if key is None:
        return {}
    value = item[key]
    if isinstance(value, str):
        # OpenAI-style calls carry their arguments as a JSON text.
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise RowError(f"'{where}.{key}' is not a JSON object ({exc.msg})") from exc
    if not isinstance(value, dict):
        raise RowError(f"'{where}.{key}' must be an object of arguments by name")
    return value


def _first_error(exc: ValidationError, where: str) -> RowError:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"])
    message = str(err["msg"]).removeprefix("Value error, ")
    return RowError(f"'{where}{'.' + loc if loc else ''}': {message}")


def tool_calls(value: Any, field: str) -> tuple[ToolCall, ...]:
    """The calls an agent made, from a list of call objects (empty when blank)."""
    items = list_value(value, field) or []
    out = []
    for i, item in enumerate(items):
        where = f"{field}[{i}]"
        if not isinstance(item, dict):
            raise RowError(f"'{where}' must be an object with a name")
        data = {
            "name": item.get("name"),
            "arguments": _arguments(item, where),
            "output": item.get("output"),
            "order": item.get("order"),
        }
        try:
            out.append(ToolCall.model_validate(data))
        except ValidationError as exc:
            raise _first_error(exc, where) from exc
    return tuple(out)


def expected_tools(value: Any, field: str) -> tuple[ExpectedTool, ...] | None:
    """The calls a correct trajectory makes; None when the field is absent or blank."""
    items = list_value(value, field)
    if items is None:
        return None
    out = []
    for i, item in enumerate(items):
        where = f"{field}[{i}]"
        if isinstance(item, str) and item.strip():
            item = {"name": item.strip()}
        if not isinstance(item, dict):
            raise RowError(f"'{where}' must be a tool name or an object with a name")
        data = {
            "name": item.get("name"),
            "arguments": _arguments(item, where),
            "argument_schemas": item.get("argument_schemas") or {},
        }
        try:
            out.append(ExpectedTool.model_validate(data))
        except ValidationError as exc:
            raise _first_error(exc, where) from exc
    return tuple(out)
