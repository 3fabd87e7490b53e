"""The parts a run composes: target, embedder, analyzer, judge and the grading plan.

``build_components`` builds them from the run's settings (the real path); tests and
benchmarks inject their own ``Components``. Scorers are built from these parts by the
registered factories (``engine.scorers``), so a test that injects a fake analyzer or judge
still runs the real pipeline.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from engine.candidates.plan import CandidatePlan
from engine.embedders.base import Embedder
from engine.graders import GraderJudges
from engine.judges.base import Judge
from engine.models import RagWeights, RunConfig, TestCase
from engine.scorers import SCORERS, ScorerContext
from engine.scorers.base import SampleKind, Scorer
from engine.scorers.batching import BatchPool
from engine.scorers.parts import BatchAnalyzer, JudgeSample
from engine.settings import Paths
from engine.targets import Target, build_target
from engine.verifier.choice import ClaimVerifier


@dataclass
class Components:
    """The parts a run composes; built from the config, or injected by tests."""

    target: Target
    """The run's target (the lane without candidates)."""
    analyzer: BatchAnalyzer
    """The response analyzer."""
    judge: Judge
    """The judge the judge scorer and rubric graders call."""
    judge_sample: JudgeSample
    """How one sample is judged (``engine.scoring.judging.judge_sample``)."""
    embedder_name: str
    """Recorded with the run."""
    judge_name: str
    """Recorded with the run."""
    claim_threshold: float | None = None
    """The analyzer's claim threshold, recorded with the run."""
    judge_prompt_version: str = ""
    """Version of the judge's prompts, recorded with the run."""
    closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    """Called when the run ends (HTTP clients of the judge and embedder)."""
    embedder: Embedder | None = None
    """The embedder semantic-similarity graders and the cascade's local judge use."""
    plan: CandidatePlan | None = None
    """Candidates and graders; None builds them from the run's settings when it asks."""
    candidate_targets: dict[str, Target] = field(default_factory=dict)
    """Target per candidate id; candidates missing here get one built from their file."""
    grade_timer: Callable[[float], None] | None = None
    """Called with the seconds each sample's grading took (benchmarks)."""
    scorers: list[Scorer] = field(default_factory=list)
    """Scorers added to those the registered factories build (tests, benchmarks)."""
    pool: BatchPool | None = None
    """Worker processes for the CPU-bound scorers (``engine.run.pool``); None: threads."""
    verifier: ClaimVerifier | None = None
    """The claim verifier that computes here (a cascade's local judge uses it too); None:
    rules, or a verifier over HTTP that decides the run's local judge only."""
    grader_judges: GraderJudges | None = None
    """Builds the judge a grader file names for itself (its ``judge:``); None: such a
    grader is refused."""
    jury: list[Judge] = field(default_factory=list)
    """Judges that score every answer beside ``judge`` (``RunConfig.jury``)."""

    async def aclose(self) -> None:
        """Release HTTP clients of the targets and judge."""
        await self.target.aclose()
        for target in self.candidate_targets.values():
            with contextlib.suppress(Exception):
                await target.aclose()
        for close in self.closers:
            with contextlib.suppress(Exception):
                await close()


def build_components(config: RunConfig, paths: Paths, run_id: str | None = None) -> Components:
    """Build target, embedder, analyzer and judge from the config (the real path);
    ``run_id`` places the run's batch ledger (``--judge-mode batch``) in its state."""
    from engine.embedders.factory import build_embedder
    from engine.embedders.store import EmbeddingStore
    from engine.judges.factory import build_judge, judge_spec_for
    from engine.judges.http.batch_queue import ledger_path
    from engine.scoring.analyzer import ResponseAnalyzer
    from engine.scoring.judging import judge_sample
    from engine.verifier.choice import LOCAL_VERIFIERS, build_verifier

    target = build_target(
        config.target,
        options=config.target_options,
        http=config.http,
        retries=config.retries,
        concurrency=config.concurrency,
    )
    # One store for the run: the analyzer, the local judge and the embedding graders
    # read each text's vector from it, so no text is embedded twice.
    embedder = EmbeddingStore(build_embedder(config.embedder, paths.cache))
    # One verifier decides the analyzer's claims and highlights and the judge's verdicts;
    # a verifier over HTTP decides the judge's only (the analyzer never spends calls).
    verifier = build_verifier(
        config.verifier, concurrency=config.concurrency, cache_dir=paths.cache
    )
    local_verifier = verifier if config.verifier in LOCAL_VERIFIERS else None
    analyzer = ResponseAnalyzer(embedder, config.analyzer, local_verifier)
    # Every judge of the run (its own, a jury's, a grader's) shares these.
    run_judge = functools.partial(
        build_judge,
        embedder=embedder,
        cache_dir=paths.cache,
        concurrency=config.concurrency,
        prices=config.prices,
        retries=config.retries,
        batch_claims=config.judge_calls == "batched",
        verifier=verifier,
    )
    judge = run_judge(
        config.judge,
        judge_mode=config.judge_mode,
        batch_ledger=ledger_path(paths.progress, run_id) if run_id else None,
        temperature=config.effective_judge_temperature,
    )
    jury = [run_judge(spec, temperature=config.effective_judge_temperature) for spec in config.jury]

    async def judged(case: TestCase, response: str, j: Judge, weights: RagWeights) -> Any:
        return await judge_sample(case, response, j, weights=weights)

    closers: list[Callable[[], Awaitable[None]]] = []
    for part in (judge, *jury, embedder.inner):
        _close_later(part, closers)
    built: dict[tuple[str, float | None], Judge] = {(config.judge.strip(), None): judge}

    def grader_judge(model: str | None, temperature: float | None) -> Judge:
        # One judge per spec and temperature for the run, however many graders name it;
        # the run's own judge when a grader names it again.
        spec = config.judge.strip() if model is None else judge_spec_for(model, config.judge)
        key = (spec, temperature)
        if key not in built:
            built[key] = run_judge(spec, temperature=temperature or 0.0)
            _close_later(built[key], closers)
        return built[key]

    return Components(
        target=target,
        analyzer=analyzer,
        judge=judge,
        judge_sample=judged,
        embedder_name=embedder.name,
        judge_name=judge.name,
        claim_threshold=analyzer.threshold,
        judge_prompt_version=judge.prompt_version,
        closers=closers,
        embedder=embedder,
        grader_judges=grader_judge,
        verifier=local_verifier,
        jury=jury,
    )


def _close_later(part: object, closers: list[Callable[[], Awaitable[None]]]) -> None:
    """Close ``part`` (an HTTP judge or embedder) when the run ends, if it needs closing."""
    close = getattr(part, "aclose", None)
    if close is not None and asyncio.iscoroutinefunction(close):
        closers.append(close)


def build_scorers(
    config: RunConfig, components: Components, kind: SampleKind = "cases"
) -> list[Scorer]:
    """Every registered kind's scorer that applies to the run and scores its kind of
    sample (cases or conversations), then the injected ones."""
    context = ScorerContext(config=config, parts=components)
    built = [f.build(context) for f in SCORERS.values() if f.samples == kind]
    return [s for s in built if s is not None] + list(components.scorers)
