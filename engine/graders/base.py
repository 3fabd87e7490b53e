"""What every grader takes and returns (after the eval-harness write-up's ``GraderResult``).

The write-up: "Every grader returns the same shape: pass, score 0.0 to 1.0, reason".
Graders are built from validated grader files (``engine.graders.spec``) and never read
files, environment or network themselves; embedders and judges are injected.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from pydantic import Field

from engine.errors import InputError
from engine.graders.spec import GraderSpec
from engine.judges.base import Usage
from engine.models import Frozen, TestCase


class GraderResult(Frozen):
    """The verdict of one grader on one output."""

    passed: bool
    """Whether the output met the grader's bar (its rule, or score >= threshold)."""
    score: float = Field(ge=0.0, le=1.0)
    """How well the output did, 0-1."""
    reason: str
    """Why, in a sentence a person can act on."""
    usage: Usage = Usage()
    """What grading cost (judge and embedder tokens); zero for deterministic graders."""


class GraderError(Exception):
    """A grader could not score one output (missing value, embedder or judge failure).

    The runner records it as a ``grader_scores`` row with a null score and this message
    as the reason; the run goes on.
    """


class GraderConfigError(InputError):
    """A grader cannot be used as configured (missing embedder, judge that cannot grade).

    Raised while graders are loaded and bound, before any output is generated or scored.
    """


GraderJudges = Callable[[str | None, float | None], object]
"""Builds the judge a grader names for itself, from its ``judge`` (a spec or a bare model
name; None: the run's) and ``judge_temperature``. Raises JudgeError when it cannot (an
unknown provider, a missing key). The composition root provides it; graders never build
judges themselves."""


@dataclass(frozen=True)
class GradeInput:
    """One output to grade and what it is graded against."""

    output: str
    """The candidate's output (untrusted text)."""
    case: TestCase
    """The test case: ``query`` is the input, ``expected_answer.text`` the expected output."""
    values: Mapping[str, object] = field(default_factory=dict)
    """Scores already computed for this sample (``ResultRecord`` fields), for built-ins."""

    @property
    def expected(self) -> str:
        """The expected output (reference answer text; empty when the case has none)."""
        return self.case.expected_answer.text


class Grader(ABC):
    """A configured grader: its spec plus whatever it was bound to."""

    def __init__(self, spec: GraderSpec) -> None:
        self.spec = spec

    @property
    def id(self) -> str:
        """The grader id (file stem unless the file gives one; built-in name otherwise)."""
        return self.spec.id

    @property
    def weight(self) -> float:
        """Default weight in a candidate's weighted score (the candidate's own weights win)."""
        return self.spec.weight

    @property
    def threshold(self) -> float | None:
        """Score at or above which the output passes; None for rule-based graders."""
        return self.spec.threshold

    @property
    def needs_values(self) -> frozenset[str]:
        """``ResultRecord`` fields the runner must compute before this grader runs."""
        return frozenset()

    @abstractmethod
    async def grade(self, sample: GradeInput) -> GraderResult:
        """Grade one output. Raises GraderError when it cannot."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(id={self.id!r}, type={self.spec.type!r})"


class SyncGrader(Grader):
    """A grader that needs no I/O: graded synchronously, also callable from async code."""

    @abstractmethod
    def grade_sync(self, sample: GradeInput) -> GraderResult:
        """Grade one output without awaiting anything. Raises GraderError when it cannot."""

    async def grade(self, sample: GradeInput) -> GraderResult:
        """Grade one output (delegates to ``grade_sync``)."""
        return self.grade_sync(sample)


def passes(score: float, threshold: float) -> bool:
    """The write-up's rule for scored graders: pass when score >= threshold.

    A tiny tolerance keeps 0.75 from failing a 0.75 threshold after float arithmetic
    such as (4 - 1) / 4.
    """
    return score >= threshold - 1e-9


def values_of(values: Mapping[str, object], names: tuple[str, ...]) -> dict[str, float | None]:
    """Numeric ``values`` by name (None when absent, null or not a number)."""
    out: dict[str, float | None] = {}
    for name in names:
        raw = values.get(name)
        out[name] = (
            float(raw) if isinstance(raw, int | float) and not isinstance(raw, bool) else None
        )
    return out
