"""``--option`` names and values: which ``RunConfig`` field a flat or dotted option name
sets, how its text is read, and a field's bounds for the command line's help and the
dashboard's forms."""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

from engine.errors import InputError
from engine.models.config import LEGACY_OPTION_PATHS, RunConfig


class OptionError(InputError):
    """An ``--option`` (or config key) that names no setting, or a value it cannot take."""


def nest_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """Flat option names (``target_timeout_s``, as given to ``--option``) or dotted paths
    (``target_options.timeout_s``) as the nested ``RunConfig`` fields they set.

    Raises OptionError naming an unknown key and the known ones, so a typo is refused
    instead of stored.
    """
    nested: dict[str, Any] = {}
    for key, value in options.items():
        path = LEGACY_OPTION_PATHS.get(key) or tuple(key.split("."))
        if not _is_field_path(path):
            known = ", ".join(sorted(LEGACY_OPTION_PATHS))
            raise OptionError(f"--option {key}: unknown option; known options: {known}")
        section = nested
        for part in path[:-1]:
            section = section.setdefault(part, {})
        section[path[-1]] = value
    return nested


def _field_annotation(path: tuple[str, ...]) -> Any:
    """The annotation of the ``RunConfig`` field at ``path``; ``_NO_FIELD`` when none is."""
    model: Any = RunConfig
    for part in path:
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return _NO_FIELD
        field = model.model_fields.get(part)
        if field is None or part in _NOT_OPTIONS:
            return _NO_FIELD
        model = field.annotation
    return model


def _is_field_path(path: tuple[str, ...]) -> bool:
    return _field_annotation(path) is not _NO_FIELD


_NO_FIELD = object()
"""What ``_field_annotation`` answers for a path that names no option."""


def _takes_only_text(annotation: Any) -> bool:
    """Whether a field of this annotation holds text and nothing else (None aside):
    ``str``, ``str | None`` or a ``Literal`` of strings."""
    if annotation is str:
        return True
    if get_origin(annotation) is Literal:
        return all(isinstance(a, str) for a in get_args(annotation))
    if get_origin(annotation) in (Union, UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        return bool(members) and all(_takes_only_text(a) for a in members)
    return False


def option_value(key: str, raw: str) -> Any:
    """The value of ``--option KEY=RAW``: RAW read as JSON when it is JSON (lists, objects,
    numbers, booleans), except that a field holding text takes RAW as typed unless it is a
    JSON string (or ``null`` where the field may be None). So the README's
    ``http_body='{"question": "{{query}}"}'``, a JSON template, stays the text it is, and
    ``series=2024`` is the series "2024"."""
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError:
        return raw
    path = LEGACY_OPTION_PATHS.get(key) or tuple(key.split("."))
    annotation = _field_annotation(path)
    if annotation is _NO_FIELD or not _takes_only_text(annotation):
        return parsed
    if isinstance(parsed, str):
        return parsed
    if parsed is None and type(None) in get_args(annotation):
        return None
    return raw


_NOT_OPTIONS = frozenset({"name", "test_set"})
"""Fields that have flags of their own and no ``--option``."""


def option_bounds(field: str) -> tuple[float | None, float | None]:
    """The inclusive lower and upper bound of the ``RunConfig`` field ``field`` (None where
    it has none), read from its constraints: the command line's help and the dashboard's
    launch form take them from here instead of repeating them."""
    import annotated_types as at

    low: float | None = None
    high: float | None = None
    for rule in RunConfig.model_fields[field].metadata:
        if isinstance(rule, at.Ge | at.Gt):
            low = float(rule.ge if isinstance(rule, at.Ge) else rule.gt)  # type: ignore[arg-type]
        elif isinstance(rule, at.Le | at.Lt):
            high = float(rule.le if isinstance(rule, at.Le) else rule.lt)  # type: ignore[arg-type]
    return low, high
