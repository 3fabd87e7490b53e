"""The ``--config`` file of a run (JSON or YAML, read bounded) and its ``map:`` section
with the ``--map`` flags: the base that ``--option``s and flags go on top of."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evalhouse.console import UsageError

MAX_CONFIG_BYTES = 1_000_000
"""Largest run config read (real ones are a few hundred bytes)."""


def config_file(args: argparse.Namespace) -> dict[str, Any]:
    """The mapping of ``--config`` (JSON or YAML; empty without one), read bounded."""
    if not args.config:
        return {}
    from engine.files import load_yaml, read_user_bytes

    raw = read_user_bytes(Path(args.config), "run config", MAX_CONFIG_BYTES, str(args.config))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{args.config}: not UTF-8 (byte offset {exc.start})") from exc
    loaded = load_yaml(text, str(args.config)) or {}
    if not isinstance(loaded, dict):
        raise UsageError(f"{args.config}: a run config is a mapping of RunConfig fields")
    if not all(isinstance(key, str) for key in loaded):
        raise UsageError(f"{args.config}: every key of a run config is a name (text)")
    return loaded


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` on top of ``base``, merging nested sections key by key."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def parse_map(items: Sequence[str], where: str = "--map") -> dict[str, str]:
    """``COLUMN=FIELD`` pairs (the last ``=`` splits: fields never contain one)."""
    out: dict[str, str] = {}
    for item in items:
        column, sep, field = str(item).rpartition("=")
        if not sep or not column.strip() or not field.strip():
            raise UsageError(f"{where} {item!r} is not COLUMN=FIELD (for example question=query)")
        out[column.strip()] = field.strip()
    return out


def with_column_map(base: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """The config with its ``map:`` section and the --map flags as ``column_map``."""
    base = dict(base)
    section = base.pop("map", None) or {}
    if isinstance(section, list):
        section = parse_map(section, f"{args.config}: map:")
    if not isinstance(section, dict):
        raise UsageError(f"{args.config}: 'map:' must be a mapping of COLUMN: FIELD")
    merged = {**base.get("column_map", {}), **{str(k): str(v) for k, v in section.items()}}
    merged.update(parse_map(getattr(args, "map", None) or []))
    if merged:
        base["column_map"] = merged
    return base
