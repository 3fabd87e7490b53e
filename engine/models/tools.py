"""Tool calls of an agent: the calls it made (``tools_called``) and the calls a correct
trajectory makes (``expected_tools``), as a test case carries them."""

from __future__ import annotations

from typing import Any, Literal

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


StepKind = Literal["model", "tool"]
"""A model turn (an LLM call) or a tool execution."""


class TrajectoryStep(Frozen):
    """One step of an agent's recorded trajectory, as a production trace shows it: a model
    turn (its text and the tool calls it asked for) or a tool execution (its arguments and
    output), with when it ran."""

    kind: StepKind
    """``model`` (an LLM call) or ``tool`` (a tool execution)."""
    name: str = ""
    """The tool's name, or the model's (empty when the trace does not name it)."""
    arguments: dict[str, Any] = Field(default_factory=dict)
    """A tool step's arguments, by name (JSON values)."""
    output: Any = None
    """A tool step's result (text or any JSON value); null when not recorded."""
    text: str = ""
    """A model step's text (the final answer, or what it said before calling tools)."""
    requested: tuple[ToolCall, ...] = ()
    """A model step's tool calls: the tools it asked to run, with their arguments."""
    call_id: str = ""
    """A tool step's call id (``gen_ai.tool.call.id``, ``tool_call.id``), '' when none."""
    start_ms: float | None = Field(default=None, ge=0)
    """When the step started, in milliseconds after the trace started; null when unknown."""
    duration_ms: float | None = Field(default=None, ge=0)
    """How long the step took, in milliseconds; null when the span has no end time."""
