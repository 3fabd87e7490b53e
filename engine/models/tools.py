"""Tool calls of an agent: the calls it made (``tools_called``) and the calls a correct
trajectory makes (``expected_tools``), as a test case carries them."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator, model_validator

from engine.models.base import Frozen


class ToolCall(Frozen):
    """One call the agent made to a tool, in the trajectory of one answer."""

    name: str = Field(min_length=1)
    """The tool's name (``lookup_order``)."""
    arguments: dict[str, Any] = Field(default_factory=dict)
    """The arguments it was called with, by name (JSON values)."""
    output: Any = None
    """What the tool returned (text or any JSON value); null when not recorded."""
    order: int | None = Field(default=None, ge=0)
    """Position of the call in the trajectory; null: its position in the list. Calls are
    ordered by it before order metrics are read, so a trace's calls may come in any order."""


class ExpectedTool(Frozen):
    """One call a correct trajectory makes: the tool, and what its arguments must be."""

    name: str = Field(min_length=1)
    """The tool's name."""
    arguments: dict[str, Any] = Field(default_factory=dict)
    """Arguments the call must have with exactly these values (JSON equality); arguments
    not listed here may have any value."""
    argument_schemas: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Arguments the call must have whose value must be valid against a JSON schema, by
    name (``{"order_id": {"type": "string", "pattern": "^[0-9]+$"}}``), for values that
    vary between correct answers (dates, free text)."""

    @field_validator("argument_schemas")
    @classmethod
    def _schemas_are_valid(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        from jsonschema import Draft202012Validator
        from jsonschema.exceptions import SchemaError

        for name, schema in value.items():
            try:
                Draft202012Validator.check_schema(schema)
            except SchemaError as exc:
                raise ValueError(
                    f"schema of argument {name!r} is not a JSON schema: {exc.message}"
                ) from exc
        return value

    @model_validator(mode="after")
    def _one_rule_per_argument(self) -> ExpectedTool:
        both = sorted(set(self.arguments) & set(self.argument_schemas))
        if both:
            raise ValueError(
                f"argument {both[0]!r} has both a value and a schema; give one of the two"
            )
        return self
