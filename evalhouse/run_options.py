"""Run options, one home: every ``evalhouse run`` flag that sets a ``RunConfig`` field is
one row of ``RUN_FLAGS``, and its type, help, default and bounds are read from the field.
A new run option is a new field (plus a row here when it deserves a flag of its own;
every field is reachable with ``--option`` or a ``--config`` file anyway).

The config is assembled in one order: the ``--config`` file (JSON or YAML,
``evalhouse.config_file``), then the ``--option``s, then the flags on top.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from types import UnionType
from typing import TYPE_CHECKING, Any, Union, get_args, get_origin

from evalhouse.config_file import config_file, deep_merge, with_column_map
from evalhouse.console import UsageError, short

if TYPE_CHECKING:
    from pydantic import ValidationError

    from engine.models import RunConfig


@dataclass(frozen=True)
class RunFlag:
    """A flag of ``evalhouse run`` that sets one ``RunConfig`` field."""

    flag: str
    """The flag as typed."""
    field: str
    """The ``RunConfig`` field it sets."""
    metavar: str | None = None
    """How the help names its value (default: the flag in capitals)."""


RUN_FLAGS: tuple[RunFlag, ...] = (
    RunFlag("--test-set", "test_set", "PATH"),
    RunFlag("--name", "name"),
    RunFlag("--series", "series", "NAME"),
    RunFlag("--iterations", "iterations", "N"),
    RunFlag("--judge", "judge", "SPEC"),
    RunFlag("--judge-repeats", "judge_repeats", "N"),
    RunFlag("--judge-temperature", "judge_temperature", "T"),
    RunFlag("--verifier", "verifier", "SPEC"),
    RunFlag("--embedder", "embedder", "SPEC"),
    RunFlag("--target", "target", "SPEC"),
    RunFlag("--concurrency", "concurrency", "N"),
    RunFlag("--workers", "workers", "N"),
    RunFlag("--force-workers", "force_workers"),
    RunFlag("--retries", "retries", "N"),
    RunFlag("--max-failed", "max_failed_fraction", "FRACTION"),
    RunFlag("--until-ci", "until_ci", "METRIC=WIDTH"),
    RunFlag("--cascade", "cascade"),
    RunFlag("--judge-mode", "judge_mode", "live|batch"),
    RunFlag("--candidates", "candidates", "ID,ID"),
    RunFlag("--graders", "graders", "ID,ID"),
    RunFlag("--project", "project", "DIR"),
    RunFlag("--retrieval-k", "retrieval_k", "K,K"),
)
"""Flags that set one field each (``--ray`` sets two: ``executor`` and ``ray_address``)."""

RAY_FIELDS = ("executor", "ray_address")

FLAG_OF_FIELD: dict[str, str] = {
    **{f.field: f.flag for f in RUN_FLAGS},
    "jury": "--judge",
    **dict.fromkeys(RAY_FIELDS, "--ray"),
}
"""The flag that sets each field, for messages that name what the person typed."""


def _dest(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def _help(field: str) -> str:
    """The field's docstring (first paragraph, one line), its bounds and its default."""
    from engine.models import RunConfig, option_bounds

    info = RunConfig.model_fields[field]
    text = " ".join((info.description or "").split("\n\n")[0].split()).replace("``", "")
    low, high = option_bounds(field)
    notes = []
    if low is not None or high is not None:
        notes.append(f"{'' if low is None else f'{low:g}'}..{'' if high is None else f'{high:g}'}")
    if info.is_required():
        notes.append("required unless --config sets it")
    elif info.default is not None and info.default is not False:
        notes.append(f"default {info.default}")
    help_text = f"{text} ({'; '.join(notes)})" if notes else text
    return help_text.replace("%", "%%")  # argparse formats help with %


def add_run_flags(parser: argparse.ArgumentParser) -> None:
    """Every flag of ``RUN_FLAGS``, ``--ray``, ``--config``, ``--option`` and ``--map``.
    Their argparse default is None: the config file, then the model, decide."""
    from engine.models import RunConfig

    for row in RUN_FLAGS:
        annotation = RunConfig.model_fields[row.field].annotation
        if annotation is bool:
            parser.add_argument(row.flag, action="store_true", default=None, help=_help(row.field))
            continue
        if row.field == "judge":
            # Repeatable: a second --judge makes a jury (``RunConfig.jury``).
            parser.add_argument(
                row.flag,
                action="append",
                metavar=row.metavar,
                help=_help(row.field) + "; repeat it for a jury that scores every answer "
                "(mean of scores, majority of pass/fail)",
            )
            continue
        # ``float | None`` parses as a float; ``tuple[int, ...]`` stays text ("1,3").
        optional = get_origin(annotation) in (Union, UnionType)
        numeric = {annotation, *(get_args(annotation) if optional else ())}
        kind: type = int if int in numeric else float if float in numeric else str
        parser.add_argument(row.flag, type=kind, metavar=row.metavar, help=_help(row.field))
    parser.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="score shards of samples as Ray tasks: on the cluster at ADDRESS, or on a local "
        "Ray started for the run (pip install 'evalhouse[scale]')",
    )
    add_config_flags(parser)
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help='any other RunConfig field, e.g. http_answer_path=$.answer or http_headers=\'{"X": '
        '"1"}\' (VALUE may be JSON)',
    )


def add_config_flags(parser: argparse.ArgumentParser) -> None:
    """``--config FILE`` and ``--map COLUMN=FIELD``."""
    parser.add_argument(
        "--config", type=Path, metavar="FILE", help="YAML/JSON file of RunConfig fields"
    )
    parser.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="COLUMN=FIELD",
        help="read test-set column COLUMN as native field FIELD (query, response, reference, "
        "context, ground_truth, domain, id, ...); repeatable",
    )


def option(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` of ``--option``: the value read as JSON when it is JSON, except for a
    text field, which takes a JSON object or number as the text typed
    (``engine.models.option_value``)."""
    from engine.models import option_value

    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise UsageError(f"--option {text!r} is not KEY=VALUE (VALUE may be JSON)")
    return key.strip(), option_value(key.strip(), raw)


def _flag_values(args: argparse.Namespace) -> dict[str, Any]:
    """The fields set by flags on this command line (flags not given are left out)."""
    values: dict[str, Any] = {}
    for row in RUN_FLAGS:
        value = getattr(args, _dest(row.flag))
        if value is None:
            continue
        if row.field in ("candidates", "graders") and not [
            i for i in str(value).split(",") if i.strip()
        ]:
            raise UsageError(f"{row.flag} names no id (use {row.flag} a,b)")
        if row.field == "judge":
            judges = [str(v) for v in value]
            value = judges[0]
            if len(judges) > 1:
                values["jury"] = tuple(judges[1:])
        elif row.field == "test_set":
            value = str(value)
        elif row.field == "project":
            value = str(Path(value).resolve())
        values[row.field] = value
    if args.ray is not None:
        values["executor"] = "ray"
        if args.ray:
            values["ray_address"] = args.ray
    return values


def run_config(args: argparse.Namespace) -> RunConfig:
    """RunConfig from an optional --config file (JSON or YAML), then ``--option``s, then
    the flags on top. Unknown option names are refused (exit 2) with the known ones."""
    from pydantic import ValidationError

    from engine.models import RunConfig, nest_options

    name = args.name or ""
    if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in name):
        raise UsageError(f"--name {short(repr(name))}: control characters are not allowed")
    base = with_column_map(config_file(args), args)
    base.pop("alerts", None)  # watched after the run, not a run option: evalhouse.alerting
    legacy = base.pop("extra", None) or {}
    if not isinstance(legacy, dict):
        raise UsageError(f"{args.config}: 'extra' must be a mapping of option: value")
    merged = deep_merge(base, nest_options(legacy))
    merged = deep_merge(merged, nest_options(dict(option(o) for o in args.option)))
    flags = _flag_values(args)
    merged.update(flags)
    missing = [f"--{k.replace('_', '-')}" for k in ("test_set", "name") if k not in merged]
    if missing:
        raise UsageError(f"the following arguments are required: {', '.join(missing)}")
    try:
        return RunConfig.model_validate(merged)
    except ValidationError as exc:
        options = frozenset(option(o)[0] for o in args.option)
        config = str(args.config) if args.config else None
        line = validation_line(exc, config=config, flags=frozenset(flags), options=options)
        raise UsageError(line) from exc


def validation_line(
    exc: ValidationError,
    *,
    config: str | None = None,
    flags: frozenset[str] = frozenset(FLAG_OF_FIELD),
    options: frozenset[str] = frozenset(),
) -> str:
    """One line for a refused setting: the flag, ``--option`` or config-file key that set
    it, the value and what it may be; never a multi-line model dump. ``flags`` are the
    fields set by a flag, ``options`` the ``--option`` names given, ``config`` the file."""
    from engine.models import LEGACY_OPTION_PATHS

    legacy = {path: key for key, path in LEGACY_OPTION_PATHS.items()}
    problems = exc.errors()
    first = problems[0]
    path = tuple(str(p) for p in first["loc"] if not isinstance(p, int))
    dotted = ".".join(path)
    if not path:
        where = config or "the run config"
    elif (
        path[0] in flags and path[0] in FLAG_OF_FIELD and (len(path) == 1 or path[0] == "until_ci")
    ):
        where = FLAG_OF_FIELD[path[0]]
    elif legacy.get(path) in options or dotted in options or not config:
        # A section-wide rule (tier order) fails at the section: name the option typed in it.
        inside = sorted(o for o in options if o.startswith(f"{dotted}."))
        typed = legacy.get(path) if legacy.get(path) in options else dotted
        where = f"--option {typed if typed in options or not inside else inside[0]}"
    else:
        where = f"{config}: key {dotted}"
    given = first.get("input")
    shown = "" if isinstance(given, dict | list) else f" {short(repr(given))}"
    message = str(first["msg"]).removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        shown, message = "", f"unknown setting; known here: {known_fields(path[:-1])}"
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"{where}{shown}: {message}{more}"


def known_fields(section: tuple[str, ...]) -> str:
    """The field names of the ``RunConfig`` section at ``section`` (the top for ``()``)."""
    from pydantic import BaseModel

    from engine.models import RunConfig

    model: type[BaseModel] = RunConfig
    for part in section:
        field = model.model_fields.get(part)
        inner = field.annotation if field is not None else None
        if not (isinstance(inner, type) and issubclass(inner, BaseModel)):
            return "see docs/runs.md"
        model = inner
    return ", ".join(sorted(model.model_fields))
