"""Graders as a scorer: every grader of the run's plan on every output, one row each.

A grader that fails gives its row a null score with the failure as the reason, and the
others still grade: a grader is an opinion about the output, not a step the sample needs.
A sample that produced no output gets a null row per grader, so its absence shows per
grader. Built-in graders read the sample's computed scores, so this scorer reads them and
runs in a stage after the analyzer and the judge.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from engine.candidates.plan import CandidatePlan, run_files
from engine.graders import GradeInput, Grader, GraderError, SyncGrader
from engine.graders.judged import grader_judge_spec, judged_criteria
from engine.judges.base import Usage
from engine.judges.http.batched import batch_calls
from engine.models import GraderScoreRecord, RunConfig, SampleKey, TestCase
from engine.pricing import model_prices
from engine.scorers.base import (
    AnswerEstimate,
    BaseScorer,
    CallEstimate,
    SampleInput,
    ScoreOutcome,
    ScorerContext,
    ScorerFactory,
    no_calls,
)
from engine.scorers.judge import (
    JUDGE_OUTPUT_TOKENS,
    PROMPT_OVERHEAD_TOKENS,
    TARGET_OUTPUT_TOKENS,
    tokens,
)
from engine.scorers.registry import register
from engine.text import split_sentences

_Verdict = tuple[float | None, bool | None, str, Usage]


def _failed(grader: Grader, err: Exception) -> _Verdict:
    if isinstance(err, GraderError):
        return None, None, str(err), Usage()
    # A bug in one grader (or the judge behind it) must not take the others down.
    return None, None, f"grader {grader.id!r} failed: {type(err).__name__}: {err}", Usage()


def _runs_inline(grader: Grader) -> bool:
    # A SyncGrader that keeps the base ``grade`` does no I/O and never awaits: calling it
    # directly saves a task per grader and sample (semantic-similarity overrides ``grade``
    # to embed in a thread, so it is gathered with the async graders).
    return isinstance(grader, SyncGrader) and type(grader).grade is SyncGrader.grade


def _inline(grader: Grader, sample: GradeInput) -> _Verdict:
    assert isinstance(grader, SyncGrader)
    try:
        result = grader.grade_sync(sample)
    except Exception as err:
        return _failed(grader, err)
    return result.score, result.passed, result.reason, result.usage


async def _awaited(grader: Grader, sample: GradeInput) -> _Verdict:
    try:
        result = await grader.grade(sample)
    except Exception as err:
        return _failed(grader, err)
    return result.score, result.passed, result.reason, result.usage


class GraderScorer(BaseScorer):
    """Grades outputs with the plan's graders, weighted per candidate."""

    name = "graders"
    tables = frozenset({"grader_scores"})

    def __init__(self, plan: CandidatePlan, timer: Callable[[float], None] | None = None) -> None:
        self._plan = plan
        self._timer = timer
        self.reads = plan.needs_values

    async def score(self, sample: SampleInput) -> ScoreOutcome:
        """One row per grader; grader failures are rows with a null score."""
        started = time.perf_counter()
        graded = GradeInput(output=sample.response, case=sample.case, values=sample.values)
        graders = self._plan.graders
        verdicts: list[_Verdict | None] = [
            _inline(g, graded) if _runs_inline(g) else None for g in graders
        ]
        waiting = [i for i, v in enumerate(verdicts) if v is None]
        if waiting:
            done = await asyncio.gather(*(_awaited(graders[i], graded) for i in waiting))
            for i, verdict in zip(waiting, done, strict=True):
                verdicts[i] = verdict
        rows: list[GraderScoreRecord] = []
        usage = Usage()
        for grader, maybe in zip(graders, verdicts, strict=True):
            assert maybe is not None
            score, passed, reason, used = maybe
            usage = usage + used
            rows.append(self._row(sample.key, grader, score, passed, reason))
        if self._timer is not None:
            self._timer(time.perf_counter() - started)
        return ScoreOutcome(records={"grader_scores": rows}, usage=usage)

    def without_output(self, key: SampleKey, case: TestCase, reason: str) -> ScoreOutcome:
        """A null row per grader, with why there was nothing to grade."""
        rows = [self._row(key, g, None, None, reason) for g in self._plan.graders]
        if self._timer is not None:
            self._timer(0.0)
        return ScoreOutcome(records={"grader_scores": rows})

    def _row(
        self,
        key: SampleKey,
        grader: Grader,
        score: float | None,
        passed: bool | None,
        reason: str,
    ) -> GraderScoreRecord:
        return GraderScoreRecord(
            **key.model_dump(),
            grader=grader.id,
            score=score,
            passed=passed,
            reason=reason,
            weight=self._plan.weight(key.candidate, grader.id),
        )


def judged_calls(spec_type: str, case: TestCase, *, batched: bool = False) -> int:
    """Judge calls one answer costs a grader of ``spec_type`` with an LLM judge: one for a
    rubric, G-Eval (its steps call is paid once per run), factuality, answer relevance and
    context relevance; one claim extraction (unless the case gives claims) plus one
    verification per expected claim for context recall (``batched``: one per
    ``engine.judges.http.batched.CLAIMS_PER_CALL`` claims); for factual correctness two
    extractions and a verification per claim on each side, for nli one per output sentence
    (both sides counted as long as the expected answer); none for the other types."""
    if spec_type in ("llm-rubric", "g-eval", "factuality", "answer-relevance"):
        return 1
    if spec_type == "context-relevance":
        return 1 if case.effective_context else 0
    given = len(case.expected_answer.claims)
    claims = given or max(1, len(split_sentences(case.expected_answer.text)))
    verify = batch_calls(claims) if batched else claims
    if spec_type == "context-recall":
        return verify if given else 1 + verify
    if spec_type == "factual-correctness":
        # the output's claims (one extraction) and the expected answer's (one more unless
        # given), each side verified against the other; the output is taken to hold about
        # as many claims as the expected answer
        return (1 if given else 2) + 2 * verify
    if spec_type == "nli":
        # one verification per output sentence, about as many as the expected answer's
        return verify
    return 0


def estimate_graders(config: RunConfig) -> AnswerEstimate:
    """The judge calls of the run's judged graders per answer, each priced by the judge
    that grades it (a grader's own, else the run's). Graders the local judge grades call
    nothing: it checks rubrics by rule and refuses what it cannot check before the run."""
    if not config.uses_graders:
        return no_calls(config)
    _, specs = run_files(config)
    judged = [(spec, grader_judge_spec(spec, config.judge)) for spec in specs]
    judged = [(spec, judge) for spec, judge in judged if judge != "local"]
    if not judged:
        return no_calls(config)
    prices = {judge: model_prices(judge, config.prices) for _, judge in judged}
    batched = config.judge_calls == "batched"

    def per_answer(case: TestCase, response: str | None) -> CallEstimate:
        answer = tokens(response) if response else TARGET_OUTPUT_TOKENS
        context = tokens("\n".join(case.effective_context) or " ")
        one_call = PROMPT_OVERHEAD_TOKENS + tokens(case.query) + answer + context
        calls = sent = received = 0
        cost = 0.0
        for spec, judge in judged:
            n = judged_calls(spec.type, case, batched=batched) * judged_criteria(spec)
            price_in, price_out = prices[judge]
            calls, sent, received = (
                calls + n,
                sent + n * one_call,
                received + n * JUDGE_OUTPUT_TOKENS,
            )
            cost += (n * one_call * price_in + n * JUDGE_OUTPUT_TOKENS * price_out) / 1e6
        return CallEstimate(calls, sent, received, cost)

    return per_answer


def _build(context: ScorerContext) -> GraderScorer | None:
    plan = context.parts.plan
    return GraderScorer(plan, context.parts.grade_timer) if plan is not None else None


register(ScorerFactory("graders", _build, estimate_graders))
