"""Column types derived from the record models, shared by the lake and the warehouse.

One mapping from Python annotations to (DuckDB type, Arrow type) keeps the Parquet
files and the DDL from drifting apart: both are computed here, never written by hand.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Union, get_args, get_origin

import pyarrow as pa
from pydantic import BaseModel


@dataclass(frozen=True)
class Column:
    """One column of a record table."""

    name: str
    duckdb_type: str
    arrow_type: pa.DataType
    nullable: bool
    doc: str
    required: bool = True
    """No default in the model: every part has it, so the warehouse can say NOT NULL.
    Columns with defaults may be absent from parts written before they existed."""


_SCALARS: dict[type, tuple[str, pa.DataType]] = {
    str: ("VARCHAR", pa.string()),
    int: ("BIGINT", pa.int64()),
    float: ("DOUBLE", pa.float64()),
    bool: ("BOOLEAN", pa.bool_()),
    datetime: ("TIMESTAMP", pa.timestamp("us")),
}


def _strip_optional(annotation: Any) -> tuple[Any, bool]:
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) != 1:
            raise TypeError(f"unsupported union {annotation!r}")
        return args[0], True
    return annotation, False


def _map(annotation: Any) -> tuple[str, pa.DataType]:
    if annotation in _SCALARS:
        return _SCALARS[annotation]
    origin = get_origin(annotation)
    if origin is Literal:
        return _SCALARS[str]
    if origin in (list, tuple):
        (item, *_rest) = get_args(annotation)
        duck, arrow = _map(item)
        return f"{duck}[]", pa.list_(arrow)
    raise TypeError(f"no column type for {annotation!r}")


def columns(model: type[BaseModel]) -> list[Column]:
    """The columns of a record model, in field order."""
    hints = typing.get_type_hints(model)
    out: list[Column] = []
    for name, field in model.model_fields.items():
        inner, optional = _strip_optional(hints[name])
        duck, arrow = _map(inner)
        doc = (field.description or "").strip()
        out.append(Column(name, duck, arrow, optional, doc, field.is_required()))
    return out


def arrow_schema(model: type[BaseModel]) -> pa.Schema:
    """The Parquet/Arrow schema of a record model."""
    return pa.schema([pa.field(c.name, c.arrow_type, nullable=c.nullable) for c in columns(model)])
