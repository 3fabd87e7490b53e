"""Options of each grader type (the ``options:`` block of a grader file), validated."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import jsonschema
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

CaseMode = Literal["sensitive", "insensitive"]

RULE_TYPES: tuple[str, ...] = ("exact-match", "contains", "regex", "json-schema", "is-refusal")
"""Deterministic graders: pass/fail by their rule, no threshold."""

ANALYSIS_TYPES: tuple[str, ...] = ("is-refusal", "factual-correctness", "nli")
"""Graders built on evalhouse's own analysis (the abstention detector, claim extraction and
the verifier), addressable by name without a file, like ``BUILTIN_TYPES``."""

PYTHON_TIMEOUT_S = 5.0
"""Default per-call time limit of a ``python`` grader: generous for a function that reads
text, short enough that a stuck one costs a run seconds, not minutes."""

BUILTIN_TYPES: tuple[str, ...] = (
    "accuracy",
    "completeness",
    "attribution",
    "faithfulness",
    "answer-synthesis",
    "claim-faithfulness",
    "rag",
)
"""evalhouse's own evaluations, addressable by name without a file."""

_REGEX_FLAGS: dict[str, re.RegexFlag] = {
    "i": re.IGNORECASE,
    "m": re.MULTILINE,
    "s": re.DOTALL,
    "x": re.VERBOSE,
    "a": re.ASCII,
}
_FLAG_NAMES: dict[str, str] = {
    "ignorecase": "i",
    "multiline": "m",
    "dotall": "s",
    "verbose": "x",
    "ascii": "a",
}


# --------------------------------------------------------------------------- options


class Options(BaseModel):
    """Base of every type's options: immutable, unknown keys are errors (typos show up)."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", populate_by_name=True, use_attribute_docstrings=True
    )


class ExactMatchOptions(Options):
    """``exact-match``: the output equals the expected answer (or a fixed value)."""

    value: str | None = None
    """Compare with this text instead of the case's expected answer."""
    strip: bool = True
    """Ignore leading and trailing whitespace on both sides."""
    case: CaseMode = "sensitive"
    """``insensitive`` compares case-folded text."""


class ContainsOptions(Options):
    """``contains``: the output includes the given substrings."""

    values: tuple[str, ...]
    """Substrings to look for."""
    mode: Literal["all", "any"] = "all"
    """``all``: every value must appear; ``any``: at least one."""
    case: CaseMode = "sensitive"
    """``insensitive`` ignores case."""

    @field_validator("values", mode="before")
    @classmethod
    def _one_value(cls, values: Any) -> Any:
        # "values: Pricing" reads naturally for a single value
        return [values] if isinstance(values, str) else values

    @field_validator("values")
    @classmethod
    def _non_empty(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        if not values:
            raise ValueError("give at least one value to look for")
        if any(not v for v in values):
            raise ValueError("an empty string is found in every output; remove it")
        return values


class RegexOptions(Options):
    """``regex``: the output matches (or must not match) a Python regular expression."""

    flags: str | tuple[str, ...] = ""
    """Letters ``imsxa`` or names (``IGNORECASE``, ``MULTILINE``, ``DOTALL``, ``VERBOSE``,
    ``ASCII``)."""
    pattern: str
    """The regular expression (Python syntax), searched anywhere in the output."""
    must_match: bool = True
    """False turns the grader around: pass when the pattern does NOT occur."""

    @field_validator("flags")
    @classmethod
    def _known_flags(cls, flags: str | tuple[str, ...]) -> str | tuple[str, ...]:
        regex_flags(flags)
        return flags

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str, info: ValidationInfo) -> str:
        if not pattern:
            raise ValueError("the pattern is empty and would match every output")
        # flags is declared first, so it is in info.data when it was valid
        flags = info.data.get("flags", "")
        try:
            re.compile(pattern, regex_flags(flags))
        except re.error as err:
            where = f" at position {err.pos}" if err.pos is not None else ""
            raise ValueError(f"invalid regular expression: {err.msg}{where}") from err
        return pattern


def regex_flags(flags: str | Sequence[str]) -> re.RegexFlag:
    """The ``re`` flags of a grader's ``flags`` option. Raises ValueError on unknown ones."""
    letters: list[str] = []
    if isinstance(flags, str):
        letters = list(flags.replace(",", "").replace(" ", "").lower())
    else:
        for name in flags:
            key = name.strip().lower().removeprefix("re.")
            letters.append(_FLAG_NAMES.get(key, key))
    out = re.RegexFlag(0)
    for letter in letters:
        if letter not in _REGEX_FLAGS:
            raise ValueError(
                f"unknown regex flag {letter!r} (use letters imsxa or IGNORECASE, MULTILINE, "
                "DOTALL, VERBOSE, ASCII)"
            )
        out |= _REGEX_FLAGS[letter]
    return out


class JsonSchemaOptions(Options):
    """``json-schema``: the output, parsed as JSON, is valid against a JSON Schema."""

    json_schema: dict[str, Any] | None = Field(default=None, alias="schema")
    """The schema inline (key ``schema``)."""
    schema_path: str | None = None
    """Or a JSON/YAML file holding it, relative to the grader file."""
    allow_code_fence: bool = True
    """Accept output wrapped in a Markdown code fence (```json ... ```), as chat models
    often answer."""

    @field_validator("json_schema")
    @classmethod
    def _valid_schema(cls, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        if schema is not None:
            check_json_schema(schema)
        return schema

    @model_validator(mode="after")
    def _one_schema(self) -> JsonSchemaOptions:
        if (self.json_schema is None) == (self.schema_path is None):
            raise ValueError("give exactly one of 'schema' (inline) or 'schema_path'")
        return self


def check_json_schema(schema: Mapping[str, Any]) -> None:
    """Raise ValueError when ``schema`` is not a valid JSON Schema (its own meta-schema)."""
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as err:
        where = "/".join(str(p) for p in err.path)
        at = f" at '{where}'" if where else ""
        raise ValueError(f"invalid JSON Schema{at}: {err.message}") from err


class SemanticOptions(Options):
    """``semantic-similarity``: no options beyond ``threshold``."""


class RubricOptions(Options):
    """``llm-rubric``: the rubric text a language model judges the output by."""

    rubric: str
    """The grading instructions (the write-up: "the rubric IS the grader")."""

    @field_validator("rubric")
    @classmethod
    def _not_blank(cls, rubric: str) -> str:
        if not rubric.strip():
            raise ValueError("the rubric is empty")
        return rubric


class BuiltinOptions(Options):
    """Built-in evaluations: no options beyond ``threshold``."""


class IsRefusalOptions(Options):
    """``is-refusal``: passes when the output declines to answer (the abstention detector)."""


class FactualCorrectnessOptions(Options):
    """``factual-correctness``: claims of the output against claims of the expected answer."""

    mode: Literal["f1", "precision", "recall"] = "f1"
    """Which figure is the score: F1 (Ragas' default), precision or recall."""


class NliOptions(Options):
    """``nli``: each output sentence verified against the contexts; no options."""


class PythonOptions(Options):
    """``python``: a function of the project scores the output."""

    function: str
    """``FILE.py:NAME``, the file relative to the project folder or to the grader file."""
    timeout_s: float = Field(default=PYTHON_TIMEOUT_S, gt=0.0, le=600.0, allow_inf_nan=False)
    """Per-call time limit in seconds; a call past it is stopped and becomes an error row."""
    module_path: str | None = Field(default=None, exclude=True)
    """The function's file, resolved and checked when the grader file is read (not
    written in files: set by the loader)."""

    @field_validator("function")
    @classmethod
    def _file_and_name(cls, value: str) -> str:
        file, sep, name = value.rpartition(":")
        if not sep or not file.strip() or not name.strip():
            raise ValueError(f"{value!r} is not FILE.py:FUNCTION (e.g. graders/tone.py:score)")
        if not file.endswith(".py"):
            raise ValueError(f"{file!r} is not a Python file (.py)")
        if not name.isidentifier():
            raise ValueError(f"{name!r} is not a Python function name")
        return value


# --------------------------------------------------------------------------- text overlap


class OverlapOptions(Options):
    """What every text-overlap grader compares."""

    value: str | None = None
    """Compare with this text instead of the case's expected answer."""
    case: CaseMode = "sensitive"
    """``insensitive`` lower-cases both texts first (ROUGE-L always does)."""


class RougeLOptions(OverlapOptions):
    """``rouge-l``: longest common subsequence of words."""

    measure: Literal["f", "precision", "recall"] = "f"
    """Which of ROUGE-L's figures is the score: F1 (default), precision or recall."""


class BleuOptions(OverlapOptions):
    """``bleu``: sentence BLEU-4 (sacrebleu)."""

    tokenize: Literal["13a", "none", "intl", "char"] = "13a"
    """sacrebleu tokenizer."""
    smooth: Literal["exp", "floor", "add-k", "none"] = "exp"
    """Smoothing of zero n-gram counts (sentence BLEU needs one; sacrebleu's default)."""


class ChrfOptions(OverlapOptions):
    """``chrf``: character n-gram F-score (sacrebleu); ``word_order: 2`` is chrF++."""

    char_order: int = Field(default=6, ge=1, le=10)
    """Longest character n-gram."""
    word_order: int = Field(default=0, ge=0, le=4)
    """Longest word n-gram (0 = plain chrF)."""
    beta: int = Field(default=2, ge=1, le=10)
    """Weight of recall over precision."""


class LevenshteinOptions(OverlapOptions):
    """``levenshtein``: 1 - edit distance / longer length (rapidfuzz)."""


OVERLAP_OPTIONS: dict[str, type[Options]] = {
    "rouge-l": RougeLOptions,
    "bleu": BleuOptions,
    "chrf": ChrfOptions,
    "levenshtein": LevenshteinOptions,
}
"""Options model of each text-overlap type."""


OVERLAP_THRESHOLDS: dict[str, float] = {
    # promptfoo's default for its rouge-n and bleu assertions (the write-up's engine).
    "rouge-l": 0.75,
    "bleu": 0.5,
    # chrF runs higher than BLEU on the same text; 0.5 is a partial paraphrase.
    "chrf": 0.5,
    # 0.8: a fifth of the characters may change (typos, formatting of dates or numbers).
    "levenshtein": 0.8,
}
"""Threshold of each text-overlap type when the file gives none."""


OPTION_MODELS: dict[str, type[Options]] = {
    "exact-match": ExactMatchOptions,
    "contains": ContainsOptions,
    "regex": RegexOptions,
    "json-schema": JsonSchemaOptions,
    "semantic-similarity": SemanticOptions,
    "llm-rubric": RubricOptions,
    **OVERLAP_OPTIONS,
    **{name: BuiltinOptions for name in BUILTIN_TYPES},
    "is-refusal": IsRefusalOptions,
    "factual-correctness": FactualCorrectnessOptions,
    "nli": NliOptions,
    "python": PythonOptions,
}
"""The options model of each grader type."""


# --------------------------------------------------------------------------- judged types


class GEvalOptions(Options):
    """``g-eval``: a criterion scored 1-5 by a judge following evaluation steps."""

    rubric: str
    """The evaluation criterion (the write-up's g-eval files call it ``rubric``)."""
    steps: tuple[str, ...] | None = None
    """Evaluation steps; None asks the judge to write them from the rubric once (cached)."""

    @field_validator("rubric")
    @classmethod
    def _not_blank(cls, rubric: str) -> str:
        if not rubric.strip():
            raise ValueError("the rubric is empty")
        return rubric

    @field_validator("steps")
    @classmethod
    def _some_steps(cls, steps: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if steps is not None and not any(s.strip() for s in steps):
            raise ValueError("give at least one step, or leave 'steps' out to have them written")
        return steps


class JudgedOptions(Options):
    """``factuality``, ``answer-relevance``, ``context-recall``, ``context-relevance``: no
    options beyond ``threshold``."""


JUDGED_TYPES: tuple[str, ...] = (
    "g-eval",
    "factuality",
    "answer-relevance",
    "context-recall",
    "context-relevance",
)
"""Graders a judge scores by a fixed method (the write-up's ``promptfoo`` assertions)."""

OPTION_MODELS.update({"g-eval": GEvalOptions, **{name: JudgedOptions for name in JUDGED_TYPES[1:]}})

PROMPTFOO_ASSERTIONS: dict[str, str] = {
    "g-eval": "g-eval",
    "factuality": "factuality",
    "answer-relevance": "answer-relevance",
    "context-recall": "context-recall",
    "context-relevance": "context-relevance",
    "llm-rubric": "llm-rubric",
    # promptfoo's context-faithfulness is RAGAS faithfulness: our claim-faithfulness.
    "context-faithfulness": "claim-faithfulness",
}
"""``type: promptfoo`` files: their ``assertion`` and the native grader type that runs it
(an assertion named like a native type runs that type)."""
