"""The one contract every scorer of a sample implements (after inspect_ai's ``Scorer``).

A scorer declares the ``results`` fields it reads (computed by earlier scorers) and the
ones it provides, and the lake tables it writes. ``score`` returns one ``ScoreOutcome`` or
raises ``ScorerError``; the run's per-sample pipeline (``engine.run.pipeline``) orders
scorers into stages by what they read, runs each stage concurrently, checks every outcome
against the declaration, and turns any failure into the sample's error row. ``estimate``
says what calls the scorer will make for a case, so a run's estimate is the sum of its
scorers' and targets' own estimates.

Adding a scorer is one file with a class implementing ``Scorer`` and one ``register`` call
with a ``ScorerFactory`` (see ``engine.scorers.registry``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from engine.judges.base import Usage
from engine.models import LAKE_TABLES, Frozen, ResultRecord, SampleKey, TestCase
from engine.scorers.parts import RunParts
from engine.targets.base import TurnReply

if TYPE_CHECKING:
    from engine.models import RunConfig


class ScorerError(Exception):
    """A scorer could not score one sample; the sample becomes an error row.

    ``transient`` errors (a judge that may answer next time) are retried by the pipeline
    up to the run's ``retries``; an error whose call already went through its own retries
    (an HTTP client's) is not transient.
    """

    def __init__(self, message: str, *, transient: bool = False) -> None:
        super().__init__(message)
        self.transient = transient


@dataclass(frozen=True)
class SampleInput:
    """What a scorer scores: one response to one case, and what earlier stages found."""

    key: SampleKey
    """Run, iteration, sample and candidate the records are written under."""
    case: TestCase
    """The test case (its context replaced by the target's retrieved passages, if any)."""
    response: str
    """The response to score (untrusted text)."""
    values: Mapping[str, Any] = field(default_factory=dict)
    """``results`` fields provided by the scorers of earlier stages."""
    turns: tuple[TurnReply, ...] = ()
    """For a conversation: the assistant's reply at each assistant turn (``response`` is
    then the transcript)."""


@dataclass(frozen=True)
class ScoreOutcome:
    """What one scorer found about one sample."""

    fields: Mapping[str, Any] = field(default_factory=dict)
    """``results`` fields, each one the scorer declared in ``provides``."""
    records: Mapping[str, Sequence[Frozen]] = field(default_factory=dict)
    """Child rows per lake table, each table one the scorer declared in ``tables``."""
    usage: Usage = field(default_factory=Usage)
    """Tokens, cost and calls the scorer spent on this sample."""
    flags: tuple[str, ...] = ()
    """Review flags for ``results.flags``."""


@dataclass(frozen=True)
class CallEstimate:
    """Calls a scorer or target expects to make for one answer, and their tokens."""

    calls: int = 0
    """Remote calls (LLM or HTTP)."""
    input_tokens: int = 0
    """Tokens sent."""
    output_tokens: int = 0
    """Tokens received."""
    cost_usd: float = 0.0
    """Expected cost in US dollars."""

    def __add__(self, other: CallEstimate) -> CallEstimate:
        return CallEstimate(
            self.calls + other.calls,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cost_usd + other.cost_usd,
        )


NO_CALLS = CallEstimate()
"""A scorer that calls nothing remote."""


@runtime_checkable
class Scorer(Protocol):
    """Scores one sample; see the module docstring for the contract."""

    @property
    def name(self) -> str:
        """Short name; prefixes the scorer's errors in ``results.error``."""
        ...

    @property
    def reads(self) -> frozenset[str]:
        """``results`` fields this scorer needs from earlier scorers."""
        ...

    @property
    def provides(self) -> frozenset[str]:
        """``results`` fields this scorer fills."""
        ...

    @property
    def tables(self) -> frozenset[str]:
        """Lake tables this scorer writes child rows to."""
        ...

    async def score(self, sample: SampleInput) -> ScoreOutcome:
        """Score one sample. Raises ScorerError when it cannot."""
        ...

    def without_output(self, key: SampleKey, case: TestCase, reason: str) -> ScoreOutcome:
        """What to record for a sample that produced no response to score (target or
        template error): usually nothing; graders record a null row each."""
        ...

    async def aclose(self) -> None:
        """Release what the scorer holds (worker tasks, clients)."""
        ...


@dataclass(frozen=True)
class ScorerContext:
    """What a factory may build a scorer from: the run's settings and its parts."""

    config: RunConfig
    """The run's settings."""
    parts: RunParts
    """The run's parts (``engine.run.components.Components``: embedder, judge, analyzer,
    plan)."""


AnswerEstimate = Callable[[TestCase, "str | None"], CallEstimate]
"""Calls a scorer will make for one answer to a case (the response when already known)."""

Estimator = Callable[["RunConfig"], AnswerEstimate]
"""Prepares a run's per-answer estimate once (reading files, prices), without building
the scorer."""


def no_calls(config: RunConfig) -> AnswerEstimate:
    """The estimate of a scorer that calls nothing remote."""
    return lambda case, response: NO_CALLS


SampleKind = Literal["cases", "conversations"]
"""What a run's samples are: single-turn test cases, or multi-turn conversations."""


def sample_kind(test_set_format: str) -> SampleKind:
    """The kind of sample of a loaded test set, from its format name."""
    return "conversations" if test_set_format.startswith("conversations") else "cases"


@dataclass(frozen=True)
class ScorerFactory:
    """How the run builds one kind of scorer, and estimates it without building it."""

    name: str
    """Unique name of the kind."""
    build: Callable[[ScorerContext], Scorer | None]
    """The scorer for a run; None when the run does not use this kind."""
    estimate: Estimator = no_calls
    """Calls per answer, without building anything."""
    samples: SampleKind = "cases"
    """The kind of sample the scorer scores; a run builds only the scorers of its kind."""


def check_declaration(scorer: Scorer) -> None:
    """Refuse a scorer that declares fields ``results`` lacks or tables the lake lacks
    (a typo would otherwise drop its values silently)."""
    known = set(ResultRecord.model_fields)
    for what, names in (("reads", scorer.reads), ("provides", scorer.provides)):
        unknown = sorted(set(names) - known)
        if unknown:
            raise TypeError(f"scorer {scorer.name!r} {what} unknown results fields: {unknown}")
    tables = sorted(set(scorer.tables) - set(LAKE_TABLES))
    if tables:
        raise TypeError(f"scorer {scorer.name!r} writes unknown lake tables: {tables}")


class BaseScorer:
    """Defaults for the optional parts of ``Scorer``: nothing read, nothing recorded for a
    sample without output, nothing to close."""

    name = "scorer"
    reads: frozenset[str] = frozenset()
    provides: frozenset[str] = frozenset()
    tables: frozenset[str] = frozenset()

    def without_output(self, key: SampleKey, case: TestCase, reason: str) -> ScoreOutcome:
        """Nothing to record."""
        return ScoreOutcome()

    async def aclose(self) -> None:
        """Nothing to release."""
