"""A ``json-schema`` grader's ``schema_path``: the schema file read and checked at load."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from engine.graders.options import JsonSchemaOptions, check_json_schema


def load_schema_file(options: JsonSchemaOptions, base_dir: Path | None) -> JsonSchemaOptions:
    """``options`` with the schema of ``schema_path`` (relative to ``base_dir``, the grader
    file's folder) read in and checked. Raises ValueError with the reason."""
    assert options.schema_path is not None
    path = Path(options.schema_path)
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ValueError(
            f"cannot read schema file {options.schema_path!r}: {err.strerror}"
        ) from err
    try:
        schema = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as err:
        raise ValueError(
            f"schema file {options.schema_path!r} is not valid JSON/YAML: {err}"
        ) from err
    if not isinstance(schema, dict):
        raise ValueError(f"schema file {options.schema_path!r} does not hold a JSON object")
    check_json_schema(schema)
    return options.model_copy(update={"json_schema": schema})
