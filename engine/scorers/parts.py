"""What scorer factories read of a run's parts: the ``RunParts`` contract.

``engine.run.components.Components`` implements it (tests inject their own); a factory
builds its scorer from these parts and the run's settings (``ScorerContext``). The
contract sits below the scorers so ``ScorerContext`` can name it without importing them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from engine.candidates.plan import CandidatePlan
from engine.embedders.base import Embedder
from engine.judges.base import Judge, Usage
from engine.models import RagWeights, SampleKey, TestCase
from engine.scorers.batching import BatchPool
from engine.verifier.choice import ClaimVerifier


class BatchAnalyzer(Protocol):
    """What the scorer needs of ``engine.scoring.analyzer.ResponseAnalyzer``."""

    def analyze_batch(self, items: Sequence[tuple[TestCase, str]]) -> Sequence[Any]:
        """One analysis, or the ``AnalysisError`` of a sample it cannot score, per item."""
        ...


class JudgeOutcomeLike(Protocol):
    """What the scorer reads of an ``engine.scoring.judging.JudgeOutcome``."""

    @property
    def usage(self) -> Usage:
        """Tokens, cost and calls of the judge for this sample."""
        ...

    def result_fields(self) -> dict[str, Any]:
        """Columns of ``results`` the judge fills."""
        ...

    def verdict_records(self, key: SampleKey) -> Any:
        """Rows of ``verdicts``."""
        ...


JudgeSample = Callable[[TestCase, str, Judge, RagWeights], Awaitable[JudgeOutcomeLike]]
"""``judge_sample`` with the weights passed positionally (tests inject their own)."""


class RunParts(Protocol):
    """The parts of a run scorer factories build from."""

    @property
    def analyzer(self) -> BatchAnalyzer:
        """The response analyzer."""
        ...

    @property
    def judge(self) -> Judge:
        """The judge the judge scorer and rubric graders call."""
        ...

    @property
    def jury(self) -> Sequence[Judge]:
        """Judges that score every answer beside ``judge`` (empty without a jury)."""
        ...

    @property
    def judge_sample(self) -> JudgeSample:
        """How one sample is judged (``engine.scoring.judging.judge_sample``)."""
        ...

    @property
    def embedder(self) -> Embedder | None:
        """The embedder, None when the run has none."""
        ...

    @property
    def plan(self) -> CandidatePlan | None:
        """Candidates and graders, None when the run grades nothing."""
        ...

    @property
    def pool(self) -> BatchPool | None:
        """Worker processes for the CPU-bound scorers' batches; None scores in threads."""
        ...

    @property
    def verifier(self) -> ClaimVerifier | None:
        """The claim verifier that computes in this process; None: rules decide."""
        ...

    @property
    def grade_timer(self) -> Callable[[float], None] | None:
        """Called with the seconds each sample's grading took (benchmarks)."""
        ...
