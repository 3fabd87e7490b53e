"""Grader files (``graders/*.yaml``): their pydantic models and a loader with readable errors.

A grader file, after the eval-harness write-up ("Drop this file in ``graders/`` ... and
it appears as a selectable grader")::

    # graders/cites-source.yaml
    type: regex                 # exact-match | contains | regex | json-schema |
                                # semantic-similarity | llm-rubric | a built-in name
    options:                    # the write-up calls this block ``config``; both are read
      pattern: '\\[Source: .+?\\]'
    weight: 1.0                 # optional, default 1; a candidate's own weights win
    threshold: 0.8              # optional, scored types only (score >= threshold passes)
    id: cites-source            # optional, defaults to the file stem
    name: Cites a source        # optional, for people
    description: ...            # optional
    judge: openai:gpt-4o-mini   # optional, judged types only: this grader's own judge
                                # (the write-up's ``config: {model: gpt-4.1-mini}`` too)

A malformed file is refused before anything is run: every problem of every file becomes
one line ``<file>: field '<field>': <reason>`` of a single ``GraderFileError``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)

from engine.errors import InputError
from engine.graders.options import (
    ANALYSIS_TYPES,
    BUILTIN_TYPES,
    JUDGED_TYPES,
    OPTION_MODELS,
    OVERLAP_OPTIONS,
    OVERLAP_THRESHOLDS,
    PROMPTFOO_ASSERTIONS,
    RULE_TYPES,
    BuiltinOptions,
    JsonSchemaOptions,
    Options,
    PythonOptions,
)
from engine.graders.python_spec import hoist, resolve_function
from engine.graders.schema_file import load_schema_file

GRADER_TYPES: tuple[str, ...] = (
    *RULE_TYPES,
    "semantic-similarity",
    *OVERLAP_OPTIONS,
    "llm-rubric",
    *BUILTIN_TYPES,
    "factual-correctness",
    "nli",
    "python",
)
"""Every grader type a file may name."""

GRADER_TYPES = (*GRADER_TYPES, *JUDGED_TYPES)

TYPE_ALIASES: dict[str, str] = {
    "llm-judge": "llm-rubric",
    "rougeL": "rouge-l",
    "chrF": "chrf",
    "embedding-similarity": "semantic-similarity",
}
"""The write-up's names for the same types."""

DEFAULT_THRESHOLDS: dict[str, float] = {
    # The write-up's default for semantic similarity ("If score >= threshold (default 0.8)").
    "semantic-similarity": 0.8,
    # Most rubric examples in the write-up use 0.7.
    "llm-rubric": 0.7,
    # The "good" tier (70 of 100) of DESIGN.md.
    "accuracy": 0.7,
    "completeness": 0.7,
    "attribution": 0.7,
    # Judge rubric pass is a score of at least 4 of 5: (4 - 1) / 4 = 0.75.
    "faithfulness": 0.75,
    "answer-synthesis": 0.75,
    "rag": 0.75,
    # The write-up's context-faithfulness threshold.
    "claim-faithfulness": 0.8,
    **OVERLAP_THRESHOLDS,
    # The write-up's promptfoo grader files: g-eval-coherence, factuality, context-recall
    # and context-relevance use 0.7, answer-relevance 0.8.
    "g-eval": 0.7,
    "factuality": 0.7,
    "answer-relevance": 0.8,
    "context-recall": 0.7,
    "context-relevance": 0.7,
    # Ragas' factual correctness reads as the harness's other claim graders (0.7).
    "factual-correctness": 0.7,
    # As claim-faithfulness: a fifth of the answer may go unsupported.
    "nli": 0.8,
    # A function returning True/False scores 1/0; half is the natural bar for a share.
    "python": 0.5,
}
"""Threshold of each scored type when the file gives none."""

_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
# --------------------------------------------------------------------------- file + spec


class GraderFile(BaseModel):
    """The top level of a grader file, before its options are checked against its type."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    type: str
    """Grader type (see ``GRADER_TYPES``; ``llm-judge`` is read as ``llm-rubric``)."""
    id: str | None = None
    """Grader id; defaults to the file stem."""
    name: str | None = None
    """Human name."""
    description: str = ""
    """What the grader checks."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Type-specific options."""
    weight: float = Field(default=1.0, ge=0.0, allow_inf_nan=False)
    """Default weight in weighted scores."""
    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    """Pass bar of scored types."""
    judge: str | None = Field(default=None, min_length=1)
    """This grader's own judge (``openai:gpt-4o-mini``, ``anthropic:MODEL``,
    ``ollama:MODEL``, ``local``, or a bare model name on the run judge's provider); None:
    the run's judge. The write-up's ``model:`` in ``config`` is read as this."""
    judge_temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    """Sampling temperature of this grader's judge (the write-up's ``temperature:`` in
    ``config``); None: the judge's own (0)."""

    @field_validator("type")
    @classmethod
    def _known_type(cls, value: str) -> str:
        value = TYPE_ALIASES.get(value, value)
        if value not in GRADER_TYPES:
            raise ValueError(f"unknown grader type {value!r} (known: {', '.join(GRADER_TYPES)})")
        return value

    @field_validator("id")
    @classmethod
    def _valid_id(cls, value: str | None) -> str | None:
        if value is not None:
            check_id(value)
        return value


def check_id(value: str) -> None:
    """Raise ValueError unless ``value`` is a usable grader id."""
    if not _ID_RE.match(value):
        raise ValueError(
            f"{value!r} is not a valid id: use letters, digits, '.', '_' and '-', "
            "starting with a letter or digit"
        )


class GraderSpec(BaseModel):
    """A validated grader: what the registry builds a ``Grader`` from."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    id: str
    """Grader id, unique in a project."""
    type: str
    """Grader type."""
    options: Options
    """Options, checked against the type."""
    weight: float = 1.0
    """Default weight in weighted scores."""
    threshold: float | None = None
    """Pass bar (score >= threshold); None for rule-based types."""
    name: str = ""
    """Human name (the id when the file gives none)."""
    description: str = ""
    """What the grader checks."""
    source: str | None = None
    """The file it came from; None for built-ins addressed by name."""
    judge: str | None = None
    """This grader's own judge (a spec or a bare model name); None: the run's judge."""
    judge_temperature: float | None = None
    """Sampling temperature of this grader's judge; None: the judge's own."""

    @property
    def own_judge(self) -> bool:
        """Whether the grader is judged apart from the run's judge."""
        return self.judge is not None or self.judge_temperature is not None


JUDGE_KEYS: dict[str, str] = {
    "model": "judge",
    "judgeModel": "judge",
    "judge_model": "judge",
    "temperature": "judge_temperature",
}
"""The write-up's spellings of a grader's own judge inside ``config``/``options`` (its
"model per grader": ``config: {model: gpt-4.1-mini, temperature: 0.1}``) and the field
each one sets."""

CALLS_JUDGE: tuple[str, ...] = ("llm-rubric", *JUDGED_TYPES, "factual-correctness", "nli")
"""Grader types that call a judge, and so may name their own."""


def builtin_spec(name: str) -> GraderSpec:
    """The spec of a built-in evaluation (or analysis grader) addressed by name, with its
    default options and threshold."""
    if name not in BUILTIN_TYPES and name not in ANALYSIS_TYPES:
        raise KeyError(name)
    return GraderSpec(
        id=name,
        type=name,
        options=OPTION_MODELS[name]() if name in ANALYSIS_TYPES else BuiltinOptions(),
        threshold=DEFAULT_THRESHOLDS.get(name),
        name=name,
    )


# --------------------------------------------------------------------------- errors


@dataclass(frozen=True)
class FileProblem:
    """One thing wrong with one project file (a grader or a candidate)."""

    file: str
    """The file as the loader was given it."""
    field: str
    """Dotted field (``options.pattern``); empty for the file as a whole."""
    reason: str
    """What is wrong, in words a person can act on."""

    def __str__(self) -> str:
        if self.field:
            return f"{self.file}: field '{self.field}': {self.reason}"
        return f"{self.file}: {self.reason}"


GraderProblem = FileProblem
"""One thing wrong with one grader file."""


class GraderFileError(InputError):
    """One or more grader files are malformed; nothing was run. One line per problem."""

    def __init__(self, problems: Sequence[FileProblem]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


def _field(loc: Sequence[int | str], prefix: str = "") -> str:
    out = prefix
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def pydantic_problems(
    err: ValidationError, file: str, prefix: str, known: Sequence[str]
) -> list[GraderProblem]:
    problems = []
    for item in err.errors(include_url=False):
        kind = item["type"]
        msg = str(item["msg"])
        if kind == "missing":
            reason = "is required"
        elif kind == "extra_forbidden":
            reason = "is not a known field"
            if len(item["loc"]) == 1 and known:
                close = difflib.get_close_matches(str(item["loc"][0]), known, n=1)
                if close:
                    reason += f"; did you mean '{close[0]}'?"
                reason += f" (known: {', '.join(known)})"
        elif kind in ("value_error", "assertion_error"):
            reason = msg.removeprefix("Value error, ").removeprefix("Assertion failed, ")
        else:
            reason = msg[:1].lower() + msg[1:]
            shown = repr(item.get("input"))
            if len(shown) <= 60:
                reason += f" (got {shown})"
        problems.append(GraderProblem(file, _field(item["loc"], prefix), reason))
    return problems


def known_fields(model: type[BaseModel]) -> list[str]:
    """The field names of ``model`` as a file spells them (aliases)."""
    return [info.alias or name for name, info in model.model_fields.items()]


# --------------------------------------------------------------------------- loading


def _normalise(raw: dict[str, Any], file: str) -> tuple[dict[str, Any], list[GraderProblem]]:
    """Accept the write-up's spellings: ``config`` for options, ``threshold`` and ``rubric``
    inside it or at the top."""
    data = dict(raw)
    problems: list[GraderProblem] = []
    if "config" in data:
        if "options" in data:
            problems.append(
                GraderProblem(file, "config", "give either 'options' or 'config', not both")
            )
        else:
            data["options"] = data.pop("config")
    data.pop("config", None)
    # The write-up's promptfoo files cite their method for people; nothing reads it.
    for note in ("inspiration", "reference"):
        if isinstance(data.get(note), str):
            data.pop(note)
    options = data.get("options")
    if options is None:
        data["options"] = options = {}
    if isinstance(options, dict):
        options = dict(options)
        if "threshold" in options:
            if "threshold" in data:
                problems.append(
                    GraderProblem(file, "options.threshold", "threshold is given twice")
                )
            data["threshold"] = options.pop("threshold")
        if "rubric" in data:
            if "rubric" in options:
                problems.append(GraderProblem(file, "rubric", "rubric is given twice"))
            options["rubric"] = data.pop("rubric")
        for key, field in JUDGE_KEYS.items():
            if key in options:
                if field in data:
                    problems.append(
                        GraderProblem(file, f"options.{key}", f"{field} is given twice")
                    )
                data[field] = options.pop(key)
        problems += [GraderProblem(file, f, r) for f, r in hoist(data, options)]
        data["options"] = options
        if data.get("type") == "promptfoo":
            problems += _promptfoo_type(data, options, file)
    return data, problems


def _promptfoo_type(
    data: dict[str, Any], options: dict[str, Any], file: str
) -> list[GraderProblem]:
    """``type: promptfoo`` with ``assertion: X`` (the write-up's files) becomes the native
    type that runs X; promptfoo's ``value`` is the rubric of ``llm-rubric``/``g-eval``."""
    assertion = options.pop("assertion", None)
    if not isinstance(assertion, str):
        known = ", ".join(PROMPTFOO_ASSERTIONS)
        return [
            GraderProblem(file, "options.assertion", f"is required for type promptfoo ({known})")
        ]
    kind = PROMPTFOO_ASSERTIONS.get(assertion, assertion)
    if kind not in GRADER_TYPES:
        known = ", ".join(sorted(set(PROMPTFOO_ASSERTIONS) | set(GRADER_TYPES)))
        return [
            GraderProblem(
                file, "options.assertion", f"unknown assertion {assertion!r} (known: {known})"
            )
        ]
    if kind in ("llm-rubric", "g-eval") and "value" in options and "rubric" not in options:
        options["rubric"] = options.pop("value")
    data["type"] = kind
    return []


def parse_grader(raw: Any, file: str, default_id: str, base_dir: Path | None) -> GraderSpec:
    """Validate the parsed YAML of one grader file. Raises GraderFileError (all problems)."""
    if not isinstance(raw, dict):
        got = "an empty file" if raw is None else f"a YAML {type(raw).__name__}"
        raise GraderFileError(
            [GraderProblem(file, "", f"a grader file must be a mapping of fields, got {got}")]
        )
    data, problems = _normalise(raw, file)
    header: GraderFile | None = None
    try:
        header = GraderFile.model_validate(data)
    except ValidationError as err:
        problems += pydantic_problems(err, file, "", known_fields(GraderFile))
    kind = TYPE_ALIASES.get(str(data.get("type")), str(data.get("type")))
    options: Options | None = None
    if kind in OPTION_MODELS and isinstance(data.get("options"), dict):
        # Options are checked even when the top level is wrong: one pass shows everything.
        model = OPTION_MODELS[kind]
        try:
            options = model.model_validate(data["options"])
        except ValidationError as err:
            problems += pydantic_problems(err, file, "options", known_fields(model))
    if header is None:
        raise GraderFileError(problems)
    gid = header.id or default_id
    if header.id is None:
        try:
            check_id(gid)
        except ValueError as err:
            problems.append(GraderProblem(file, "id", f"the file stem {err}; give an 'id'"))
    if (header.judge is not None or header.judge_temperature is not None) and (
        header.type not in CALLS_JUDGE
    ):
        field = "judge" if header.judge is not None else "judge_temperature"
        problems.append(
            GraderProblem(
                file,
                field,
                f"{header.type} calls no judge of its own; a grader's judge is for "
                f"{', '.join(CALLS_JUDGE)}",
            )
        )
    if header.threshold is not None and header.type in RULE_TYPES:
        problems.append(
            GraderProblem(
                file,
                "threshold",
                f"{header.type} passes or fails by its rule and takes no threshold",
            )
        )
    if isinstance(options, JsonSchemaOptions) and options.schema_path is not None:
        try:
            options = load_schema_file(options, base_dir)
        except ValueError as err:
            problems.append(GraderProblem(file, "options.schema_path", str(err)))
    if isinstance(options, PythonOptions):
        try:
            options = resolve_function(options, base_dir)
        except ValueError as err:
            problems.append(GraderProblem(file, "function", str(err)))
    if problems or options is None:
        raise GraderFileError(problems)
    threshold = header.threshold
    if threshold is None and header.type not in RULE_TYPES:
        threshold = DEFAULT_THRESHOLDS[header.type]
    return GraderSpec(
        id=gid,
        type=header.type,
        options=options,
        weight=header.weight,
        threshold=threshold,
        name=header.name or gid,
        description=header.description,
        source=file,
        judge=header.judge.strip() if header.judge is not None else None,
        judge_temperature=header.judge_temperature,
    )
