"""The write-up's four deterministic graders: exact-match, contains, regex, json-schema.

Pass/fail by rule; no threshold. Everything a grader needs (folded values, the compiled
pattern, the schema validator) is prepared once when it is built, so grading one output
is a few string operations.
"""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
from jsonschema.exceptions import best_match

from engine.graders.base import GradeInput, GraderError, GraderResult, SyncGrader
from engine.graders.options import (
    ContainsOptions,
    ExactMatchOptions,
    JsonSchemaOptions,
    RegexOptions,
    regex_flags,
)
from engine.graders.spec import GraderSpec

_FENCE_RE = re.compile(r"^```[A-Za-z0-9_-]*[ \t]*\n(.*?)\n?```$", re.DOTALL)
_SHOWN = 60


def _shorten(text: str, limit: int = _SHOWN) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ExactMatchGrader(SyncGrader):
    """Pass when the output equals the expected answer (or ``options.value``).

    Score 1 or 0. ``strip`` ignores surrounding whitespace, ``case: insensitive`` compares
    case-folded text.
    """

    def __init__(self, spec: GraderSpec) -> None:
        super().__init__(spec)
        assert isinstance(spec.options, ExactMatchOptions)
        self._opts = spec.options
        self._fixed = None if spec.options.value is None else self._norm(spec.options.value)

    def _norm(self, text: str) -> str:
        if self._opts.strip:
            text = text.strip()
        if self._opts.case == "insensitive":
            text = text.casefold()
        return text

    def grade_sync(self, sample: GradeInput) -> GraderResult:
        """Compare the output with the reference."""
        if self._fixed is not None:
            want, what = self._fixed, "the configured value"
        else:
            if not sample.expected:
                raise GraderError(
                    f"exact-match grader {self.id!r}: case {sample.case.id!r} has no expected "
                    "answer to compare with"
                )
            want, what = self._norm(sample.expected), "the expected answer"
        got = self._norm(sample.output)
        if got == want:
            return GraderResult(passed=True, score=1.0, reason=f"output equals {what}")
        at = next(
            (i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b),
            min(len(got), len(want)),
        )
        return GraderResult(
            passed=False,
            score=0.0,
            reason=f"output differs from {what} at character {at} "
            f"(output {len(got)} characters, expected {len(want)})",
        )


class ContainsGrader(SyncGrader):
    """Pass when the output includes all (or any) of ``values``; score = share found."""

    def __init__(self, spec: GraderSpec) -> None:
        super().__init__(spec)
        assert isinstance(spec.options, ContainsOptions)
        self._opts = spec.options
        self._fold = spec.options.case == "insensitive"
        self._needles = tuple(v.casefold() if self._fold else v for v in spec.options.values)

    def grade_sync(self, sample: GradeInput) -> GraderResult:
        """Look for each value in the output."""
        text = sample.output.casefold() if self._fold else sample.output
        values = self._opts.values
        missing = [values[i] for i, n in enumerate(self._needles) if n not in text]
        found = len(values) - len(missing)
        score = found / len(values)
        passed = not missing if self._opts.mode == "all" else found > 0
        if not missing:
            reason = f"found all {len(values)} values"
        else:
            shown = ", ".join(repr(_shorten(m, 40)) for m in missing[:5])
            more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
            reason = (
                f"found {found} of {len(values)} ({self._opts.mode} required); "
                f"missing {shown}{more}"
            )
        return GraderResult(passed=passed, score=score, reason=reason)


class RegexGrader(SyncGrader):
    """Pass when ``pattern`` occurs in the output (or, with ``must_match: false``, does not)."""

    def __init__(self, spec: GraderSpec) -> None:
        super().__init__(spec)
        assert isinstance(spec.options, RegexOptions)
        self._opts = spec.options
        self._pattern = re.compile(spec.options.pattern, regex_flags(spec.options.flags))

    def grade_sync(self, sample: GradeInput) -> GraderResult:
        """Search the pattern in the output."""
        match = self._pattern.search(sample.output)
        shown = _shorten(self._opts.pattern, 40)
        if match is not None:
            where = f"matched {_shorten(match.group(0), 40)!r} at character {match.start()}"
            if self._opts.must_match:
                return GraderResult(passed=True, score=1.0, reason=where)
            return GraderResult(
                passed=False, score=0.0, reason=f"{where}, but /{shown}/ must not match"
            )
        if self._opts.must_match:
            return GraderResult(passed=False, score=0.0, reason=f"no match for /{shown}/")
        return GraderResult(passed=True, score=1.0, reason=f"no match for /{shown}/, as required")


def strip_code_fence(text: str) -> str:
    """The inside of a Markdown code fence wrapping the whole text, else the text stripped."""
    stripped = text.strip()
    match = _FENCE_RE.match(stripped)
    return match.group(1).strip() if match else stripped


class JsonSchemaGrader(SyncGrader):
    """Pass when the output parses as JSON and is valid against the schema; score 1 or 0."""

    def __init__(self, spec: GraderSpec) -> None:
        super().__init__(spec)
        assert isinstance(spec.options, JsonSchemaOptions)
        assert spec.options.json_schema is not None  # schema_path was resolved at load
        self._opts = spec.options
        schema = spec.options.json_schema
        self._validator: Any = jsonschema.validators.validator_for(schema)(schema)

    def grade_sync(self, sample: GradeInput) -> GraderResult:
        """Parse the output and validate it."""
        text = strip_code_fence(sample.output) if self._opts.allow_code_fence else sample.output
        try:
            document = json.loads(text)
        except json.JSONDecodeError as err:
            return GraderResult(
                passed=False,
                score=0.0,
                reason=f"output is not valid JSON: {err.msg} at line {err.lineno} "
                f"column {err.colno}",
            )
        errors = list(self._validator.iter_errors(document))
        if not errors:
            return GraderResult(passed=True, score=1.0, reason="output is valid against the schema")
        first = best_match(errors)
        where = "/" + "/".join(str(p) for p in first.absolute_path)
        count = f"{len(errors)} schema violations" if len(errors) > 1 else "1 schema violation"
        return GraderResult(
            passed=False,
            score=0.0,
            reason=f"{count}; at '{where}': {_shorten(first.message, 120)}",
        )
