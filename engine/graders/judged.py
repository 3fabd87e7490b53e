"""Graders a judge scores by a fixed method: the write-up's ``promptfoo`` assertions, native.

* ``g-eval`` (Liu et al. 2023): the rubric is turned into evaluation steps once per grader
  (one judge call, cached by the judge; or the file gives ``steps``), then each output is
  scored 1-5 following them; score = (s - 1) / 4, so 4 of 5 is 0.75. The write-up's
  token-probability weighting needs logprobs, which Anthropic does not expose: the integer
  score is used. A one-statement rubric joining checks that stand alone ("mentions the
  price and cites a source") is scored one check at a time, and passes when every check
  passes. With the local judge the rubric must be checkable criteria
  (``engine.graders.local_rubric``), all of which must be met to pass.
* ``factuality`` (promptfoo, after OpenAI evals): the output against the expected answer,
  category A subset, B superset, C same, D disagreement, E immaterial differences;
  D scores 0, the others 1 (promptfoo's default). The local judge reads D as "some claim of
  the output is CONTRADICTED by the expected answer" (its contradiction rules).
* ``answer-relevance``: does the output address the question; the judge's RAG relevance
  1-5 mapped by (s - 1) / 4. (promptfoo generates questions from the answer and embeds them;
  the judge's relevance rubric answers the same question in one call.)
* ``context-recall`` (RAGAS): the expected answer's claims (the case's given claims, else
  extracted by the judge), each verified against the context; score = supported / claims.
* ``context-relevance`` (RAGAS): the context split into sentences; score = relevant /
  sentences. The local judge cannot tell relevance and refuses it before anything runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol, TypeVar, runtime_checkable

from engine.graders.base import (
    GradeInput,
    Grader,
    GraderConfigError,
    GraderError,
    GraderResult,
    passes,
)
from engine.graders.local_rubric import (
    Criterion,
    LocalJudgeRefusal,
    compile_rubric,
    grade_locally,
    statement_parts,
)
from engine.graders.options import GEvalOptions
from engine.graders.rubric import is_local, where
from engine.graders.spec import DEFAULT_THRESHOLDS, GraderSpec
from engine.judges.base import BatchVerifier, ClaimVerdict, Judge, JudgeError, Usage
from engine.judges.factory import judge_spec_for
from engine.judges.http.graded import Factuality, GEvalScore, Relevance
from engine.text import split_sentences

T = TypeVar("T")


@runtime_checkable
class GEvalJudge(Protocol):
    """A judge that can run G-Eval's two steps (``engine.judges.http.graded.GradedCalls``)."""

    @property
    def name(self) -> str:
        """Judge identifier."""
        ...

    async def geval_steps(self, rubric: str) -> tuple[tuple[str, ...], Usage]:
        """The rubric as evaluation steps."""
        ...

    async def geval_score(
        self,
        rubric: str,
        steps: Sequence[str],
        question: str,
        answer: str,
        expected: str,
        context: Sequence[str],
    ) -> GEvalScore:
        """Score 1-5 following the steps."""
        ...


@runtime_checkable
class FactualityJudge(Protocol):
    """A judge that classifies an output against the reference in one call."""

    async def classify_factuality(self, question: str, answer: str, expected: str) -> Factuality:
        """Category A-E with a reason."""
        ...


@runtime_checkable
class RelevanceJudge(Protocol):
    """A judge that can tell which context sentences are relevant to a question."""

    async def relevant_sentences(self, question: str, sentences: Sequence[str]) -> Relevance:
        """One flag per sentence, with a reason."""
        ...


def _one_to_five(score: float) -> float:
    return min(1.0, max(0.0, (score - 1.0) / 4.0))


class JudgedGrader(Grader):
    """Shared binding and error wrapping of the judged graders."""

    def __init__(self, spec: GraderSpec, judge: object | None) -> None:
        super().__init__(spec)
        if judge is None:
            raise GraderConfigError(f"{where(spec)} is {spec.type} and needs a judge")
        self._judge = judge
        self._name = str(getattr(judge, "name", "?"))
        threshold = spec.threshold if spec.threshold is not None else None
        self._threshold = threshold if threshold is not None else DEFAULT_THRESHOLDS[spec.type]

    async def _call(self, make: Callable[[], Awaitable[T]]) -> T:
        try:
            return await make()
        except JudgeError as err:
            raise GraderError(
                f"{self.spec.type} grader {self.id!r}: judge {self._name} failed: {err}"
            ) from err

    def _result(self, score: float, reason: str, usage: Usage | None = None) -> GraderResult:
        return GraderResult(
            passed=passes(score, self._threshold),
            score=score,
            reason=reason,
            usage=usage or Usage(),
        )

    def _needs_judge(self) -> Judge:
        if not isinstance(self._judge, Judge):
            raise GraderConfigError(
                f"{where(self.spec)} is {self.spec.type}, but {self._name!r} is not a judge"
            )
        return self._judge


class GEvalGrader(JudgedGrader):
    """G-Eval: steps from the rubric (once), then a 1-5 score per output.

    G-Eval scores one criterion on one scale, so a rubric that joins checks which stand
    alone ("mentions the price and cites a source") is scored one criterion at a time:
    the score is their mean, and the output passes when every criterion passes (with the
    local judge: is met; with an LLM judge: scores at least the threshold). The reason
    names each criterion with its result."""

    def __init__(self, spec: GraderSpec, judge: object | None) -> None:
        super().__init__(spec, judge)
        assert isinstance(spec.options, GEvalOptions)
        self._rubric = spec.options.rubric
        given = spec.options.steps
        steps = tuple(s for s in given if s.strip()) if given else None
        # Steps a file gives were written for its rubric as a whole: it is not split then.
        self._parts = (self._rubric,) if steps else statement_parts(self._rubric)
        self._steps: dict[str, tuple[str, ...]] = {self._rubric: steps} if steps else {}
        self._lock = asyncio.Lock()
        self._criteria: tuple[Criterion, ...] = ()
        if is_local(judge):
            text = "\n".join([self._rubric, *(steps or ())])
            self._criteria = compile_rubric(text, f"{where(spec)} is a g-eval")
        elif not isinstance(judge, GEvalJudge):
            raise GraderConfigError(
                f"{where(spec)} is g-eval, but judge {self._name!r} cannot run it"
            )

    @property
    def criteria(self) -> int:
        """How many criteria are scored on their own (judge calls per output)."""
        return len(self._parts)

    async def _ensure_steps(self, judge: GEvalJudge, rubric: str) -> tuple[tuple[str, ...], Usage]:
        # One steps call per criterion, however many samples ask at once; a failure is the
        # asking sample's error, and the next sample asks again.
        async with self._lock:
            if rubric in self._steps:
                return self._steps[rubric], Usage()
            steps, usage = await self._call(lambda: judge.geval_steps(rubric))
            self._steps[rubric] = steps
            return steps, usage

    async def grade(self, sample: GradeInput) -> GraderResult:
        """Score one output by the steps. Raises GraderError when the judge fails."""
        if self._criteria:
            score, reason = grade_locally(self._criteria, sample.output)
            return GraderResult(passed=score >= 1.0, score=score, reason=reason)
        judge = self._judge
        assert isinstance(judge, GEvalJudge)
        scored = await asyncio.gather(*(self._score(judge, p, sample) for p in self._parts))
        usage = sum((used for _, _, used in scored), Usage())
        if len(scored) == 1:
            score, reason, _ = scored[0]
            return self._result(score, reason, usage)
        scores = [score for score, _, _ in scored]
        reason = "; ".join(
            f"{part!r}: {why}" for part, (_, why, _) in zip(self._parts, scored, strict=True)
        )
        return GraderResult(
            passed=all(passes(s, self._threshold) for s in scores),
            score=sum(scores) / len(scores),
            reason=f"G-Eval per criterion, each to pass: {reason}",
            usage=usage,
        )

    async def _score(
        self, judge: GEvalJudge, rubric: str, sample: GradeInput
    ) -> tuple[float, str, Usage]:
        """One criterion's 0-1 score, the reason and what it cost."""
        steps, usage = await self._ensure_steps(judge, rubric)
        result = await self._call(
            lambda: judge.geval_score(
                rubric,
                steps,
                sample.case.query,
                sample.output,
                sample.expected,
                sample.case.effective_context,
            )
        )
        raw, reasoning = result.score, result.reasoning.strip()
        reason = f"G-Eval {raw:g}/5 -> {_one_to_five(raw):.3f}" + (
            f": {reasoning}" if reasoning else ""
        )
        return _one_to_five(raw), reason, usage + result.usage


class FactualityGrader(JudgedGrader):
    """promptfoo's factuality: D (disagreement) scores 0, A/B/C/E score 1."""

    def __init__(self, spec: GraderSpec, judge: object | None) -> None:
        super().__init__(spec, judge)
        if not isinstance(judge, FactualityJudge):
            self._needs_judge()

    async def grade(self, sample: GradeInput) -> GraderResult:
        """Classify the output against the expected answer."""
        if not sample.expected.strip():
            raise GraderError(
                f"factuality grader {self.id!r}: case {sample.case.id!r} has no expected answer"
            )
        judge = self._judge
        if isinstance(judge, FactualityJudge):
            found = await self._call(
                lambda: judge.classify_factuality(sample.case.query, sample.output, sample.expected)
            )
            category = found.category
            score = 0.0 if category == "D" else 1.0
            return self._result(score, f"category {category}: {found.reason}".strip(), found.usage)
        return await self._by_claims(sample)

    async def _by_claims(self, sample: GradeInput) -> GraderResult:
        judge = self._needs_judge()
        claims = await self._call(lambda: judge.extract_claims(sample.output))
        texts = [c.text for c in claims.claims]
        verdicts = await _verify_all(self, judge, texts, [sample.expected])
        usage = sum((v.usage for v in verdicts), claims.usage)
        against = [c for c, v in zip(texts, verdicts, strict=True) if v.verdict == "CONTRADICTED"]
        if against:
            listed = "; ".join(repr(c) for c in against)
            return self._result(
                0.0, f"category D: contradicts the expected answer: {listed}", usage
            )
        return self._result(
            1.0, f"no claim of {len(claims.claims)} contradicts the expected answer", usage
        )


class AnswerRelevanceGrader(JudgedGrader):
    """The judge's relevance of the output to the question, 1-5 mapped to 0-1."""

    def __init__(self, spec: GraderSpec, judge: object | None) -> None:
        super().__init__(spec, judge)
        self._needs_judge()

    async def grade(self, sample: GradeInput) -> GraderResult:
        """One relevance score."""
        judge = self._needs_judge()
        found = await self._call(lambda: judge.score_relevance(sample.case.query, sample.output))
        score = _one_to_five(found.score)
        reason = f"relevance {found.score:g}/5 -> {score:.3f}" + (
            f": {found.reasoning}" if found.reasoning else ""
        )
        return self._result(score, reason, found.usage)


class ContextRecallGrader(JudgedGrader):
    """Share of the expected answer's claims the context supports."""

    def __init__(self, spec: GraderSpec, judge: object | None) -> None:
        super().__init__(spec, judge)
        self._needs_judge()

    async def grade(self, sample: GradeInput) -> GraderResult:
        """Verify each expected claim against the context."""
        judge = self._needs_judge()
        given = [c.text for c in sample.case.expected_answer.claims]
        usage = Usage()
        if given:
            claims = given
        elif sample.expected.strip():
            extracted = await self._call(lambda: judge.extract_claims(sample.expected))
            claims, usage = [c.text for c in extracted.claims], extracted.usage
        else:
            raise GraderError(
                f"context-recall grader {self.id!r}: case {sample.case.id!r} has no expected "
                "answer or claims"
            )
        if not claims:
            raise GraderError(
                f"context-recall grader {self.id!r}: the expected answer holds no claim"
            )
        verdicts = await _verify_all(self, judge, claims, sample.case.effective_context)
        usage = sum((v.usage for v in verdicts), usage)
        missing = [c for c, v in zip(claims, verdicts, strict=True) if v.verdict != "SUPPORTED"]
        found = len(claims) - len(missing)
        reason = f"{found} of {len(claims)} expected claims found in the context"
        if missing:
            reason += "; not found: " + "; ".join(repr(m) for m in missing)
        return self._result(found / len(claims), reason, usage)


class ContextRelevanceGrader(JudgedGrader):
    """Share of the context's sentences relevant to the question."""

    def __init__(self, spec: GraderSpec, judge: object | None) -> None:
        super().__init__(spec, judge)
        if is_local(judge):
            raise LocalJudgeRefusal(
                f"{where(spec)} is context-relevance: the local judge is deterministic and "
                "cannot tell whether a context sentence is relevant to a question. Run with "
                "--judge openai:MODEL, anthropic:MODEL or ollama:MODEL, or leave this grader out."
            )
        if not isinstance(judge, RelevanceJudge):
            raise GraderConfigError(
                f"{where(spec)} is context-relevance, but judge {self._name!r} cannot run it"
            )
        self._relevance = judge

    async def grade(self, sample: GradeInput) -> GraderResult:
        """One call judging every context sentence."""
        sentences = _sentences(sample.case.effective_context)
        if not sentences:
            raise GraderError(f"context-relevance grader {self.id!r}: the case has no context")
        found = await self._call(
            lambda: self._relevance.relevant_sentences(sample.case.query, sentences)
        )
        relevant = sum(found.relevant)
        reason = f"{relevant} of {len(sentences)} context sentences relevant to the question"
        why = found.reason.strip()
        return self._result(
            relevant / len(sentences), reason + (f": {why}" if why else ""), found.usage
        )


async def _verify_all(
    grader: JudgedGrader, judge: Judge, claims: Sequence[str], context: Sequence[str]
) -> list[ClaimVerdict]:
    if claims and isinstance(judge, BatchVerifier) and judge.batches_claims:
        # one call for all the claims (``judge_calls=batched``), as judge_sample does
        return await grader._call(lambda: judge.verify_claims(list(claims), context))

    async def one(claim: str) -> ClaimVerdict:
        return await grader._call(lambda: judge.verify_claim(claim, context))

    return list(await asyncio.gather(*(one(c) for c in claims)))


def _sentences(context: Sequence[str]) -> list[str]:
    return [s.text.strip() for chunk in context for s in split_sentences(chunk) if s.text.strip()]


JUDGED_GRADERS: dict[str, type[JudgedGrader]] = {
    "g-eval": GEvalGrader,
    "factuality": FactualityGrader,
    "answer-relevance": AnswerRelevanceGrader,
    "context-recall": ContextRecallGrader,
    "context-relevance": ContextRelevanceGrader,
}
"""The grader class of each judged type."""


def context_sentences(context: Sequence[str]) -> int:
    """How many sentences ``context-relevance`` would judge (for estimates)."""
    return len(_sentences(context))


def judged_criteria(spec: GraderSpec) -> int:
    """How many criteria a grader scores with one call each per output: a g-eval's checks
    (``GEvalGrader``), 1 for every other type (for estimates)."""
    if isinstance(spec.options, GEvalOptions) and not spec.options.steps:
        return len(statement_parts(spec.options.rubric))
    return 1


def grader_judge_spec(spec: GraderSpec, run_judge: str) -> str:
    """The spec of the judge that grades ``spec``: its own (``judge:``), else the run's.
    Raises GraderConfigError when its own cannot be named (a bare model name on a run
    judged locally)."""
    if spec.judge is None:
        return run_judge.strip()
    try:
        return judge_spec_for(spec.judge, run_judge)
    except JudgeError as err:
        raise GraderConfigError(f"{where(spec)}: its judge: {err}") from err
