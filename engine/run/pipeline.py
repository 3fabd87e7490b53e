"""One sample through one pipeline: the lane answers, then stages of scorers score.

Scorers are ordered into stages by what they read: a scorer runs after every scorer that
provides a field it reads, and the scorers of one stage run concurrently. Every outcome is
checked against its scorer's declaration. Any failure (the lane's template, its target, a
scorer) becomes the sample's ``error`` through one path, ``SampleErrors``: the row keeps
what the other scorers found, and a sample with no response to score gets each scorer's
``without_output`` records. A transient scorer error is retried up to the run's
``retries``; secrets are masked in every error text. Judge calls of iteration N are ask
``engine.judges.asks.first_ask(N, judge_repeats)`` onward, so each iteration asks afresh.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from engine.judges.asks import asking, first_ask
from engine.judges.base import Usage
from engine.judges.spend import metering
from engine.lake import CHILD_TABLES
from engine.models import Frozen, ResultRecord, SampleKey, TestCase
from engine.models.config import MAX_SCORED_CHARS
from engine.run.lanes import Lane
from engine.run.writer import SampleOutput
from engine.scorers.base import SampleInput, ScoreOutcome, Scorer, ScorerError, check_declaration
from engine.scoring.completeness import required_claims_pass
from engine.secrets import redact
from engine.targets import TargetError, TargetResponse, TurnReply
from engine.testsets import case_hash


def stages(scorers: Sequence[Scorer]) -> list[list[Scorer]]:
    """Scorers grouped into stages: each after every scorer that provides what it reads.

    Raises TypeError for a bad declaration, two scorers providing one field, or a cycle.
    """
    provider: dict[str, Scorer] = {}
    for scorer in scorers:
        check_declaration(scorer)
        for name in scorer.provides:
            if name in provider:
                raise TypeError(
                    f"scorers {provider[name].name!r} and {scorer.name!r} both provide {name!r}"
                )
            provider[name] = scorer
    level: dict[int, int] = {}

    def depth(scorer: Scorer, seen: tuple[int, ...]) -> int:
        if id(scorer) in seen:
            raise TypeError(f"scorer {scorer.name!r} depends on itself through what it reads")
        if id(scorer) not in level:
            needs = {
                provider[f] for f in scorer.reads if f in provider and provider[f] is not scorer
            }
            level[id(scorer)] = 1 + max((depth(n, (*seen, id(scorer))) for n in needs), default=-1)
        return level[id(scorer)]

    out: list[list[Scorer]] = []
    for scorer in scorers:
        at = depth(scorer, ())
        while len(out) <= at:
            out.append([])
        out[at].append(scorer)
    return out


def scored_part(text: str, limit: int) -> str:
    """The start of ``text`` that is scored: all of it up to ``limit`` characters, else cut
    at the last sentence or line end in the final tenth before the limit (at the limit when
    there is none). Scoring time grows faster than an answer's length, and what a reader
    judges an answer by is its start; the whole answer is still stored."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    floor = int(limit * 0.9)
    cut = max(head.rfind(". ", floor), head.rfind("\n", floor), head.rfind("? ", floor))
    return head[: cut + 1] if cut >= floor else head


@dataclass
class SampleErrors:
    """The one path by which anything that went wrong reaches ``results.error``."""

    messages: list[str] = field(default_factory=list)

    def add(self, where: str, message: str) -> None:
        """Record that ``where`` (target, template, a scorer's name) failed, and why."""
        self.messages.append(f"{where}: {redact(message)}")

    def text(self) -> str | None:
        """The ``error`` column: every failure in order, or None."""
        return "; ".join(self.messages) if self.messages else None


class SamplePipeline:
    """Scores samples of one run: lanes answer, scorer stages score, one row comes out."""

    def __init__(
        self,
        scorers: Sequence[Scorer],
        *,
        run_id: str,
        retries: int,
        clock: Callable[[], datetime],
        max_scored_chars: int = MAX_SCORED_CHARS,
        judge_repeats: int = 1,
    ) -> None:
        self.scorers = list(scorers)
        self.judge_repeats = judge_repeats
        self.stages = stages(self.scorers)
        self.run_id = run_id
        self.retries = retries
        self.clock = clock
        self.max_scored_chars = max_scored_chars

    async def evaluate(self, case: TestCase, lane: Lane, iteration: int) -> SampleOutput:
        """The result row and child rows of ``case`` answered by ``lane``."""
        key = SampleKey(
            run_id=self.run_id, iteration=iteration, sample_id=case.id, candidate=lane.candidate
        )
        errors = SampleErrors()
        reply = await self._answer(case, lane, errors, key)
        started = time.perf_counter()
        if reply is None:
            outcomes = [s.without_output(key, case, errors.text() or "") for s in self.scorers]
            fields: dict[str, Any] = {}
        else:
            scored = case
            if reply.contexts is not None:
                # The ids go with the passages: ids of the case's own passages would
                # mislabel a target's.
                retrieved = {"context": reply.contexts, "retrieved_context_ids": reply.context_ids}
                scored = case.model_copy(update=retrieved)
            text = scored_part(reply.text, self.max_scored_chars)
            with asking(first_ask(iteration, self.judge_repeats)):
                outcomes, fields = await self._score(key, scored, text, errors, reply.turns)
            if len(text) < len(reply.text):
                outcomes.append(ScoreOutcome(flags=("truncated",)))
        usage = sum((o.usage for o in outcomes), Usage())
        base: dict[str, Any] = {
            **key.model_dump(),
            "domain": case.domain,
            "ai_provider": lane.provider(case),
            "query": case.query,
            "response": reply.text if reply is not None else "",
            "tags": list(case.tags),
            "latency_ms": reply.latency_ms if reply is not None else None,
            "input_tokens": reply.input_tokens if reply is not None else None,
            "output_tokens": reply.output_tokens if reply is not None else None,
            "judge_input_tokens": usage.input_tokens,
            "judge_output_tokens": usage.output_tokens,
            "scoring_ms": (time.perf_counter() - started) * 1000.0,
            "cost_usd": (reply.cost_usd if reply is not None else 0.0) + usage.cost_usd,
            "sample_hash": case_hash(case),
            "scored_at": self.clock(),
        }
        flags = [f for o in outcomes for f in o.flags]
        children: dict[str, list[Frozen]] = {t: [] for t in CHILD_TABLES}
        for outcome in outcomes:
            for table, rows in outcome.records.items():
                children[table].extend(rows)
        row = {**fields, **base, "flags": list(dict.fromkeys(flags)), "error": errors.text()}
        if "passed" in row:
            row["passed"] = required_claims_pass(row["passed"], row["flags"])
        try:
            return SampleOutput(ResultRecord.model_validate(row), children)
        except ValidationError as exc:
            # A scorer produced a value the schema refuses: keep the sample as an error row.
            errors.add("internal", f"result does not fit the schema: {exc.errors()[:2]}")
            why = errors.text() or ""
            base.update(flags=row["flags"], error=why)
            children = {t: [] for t in CHILD_TABLES}
            for scorer in self.scorers:
                for table, rows in scorer.without_output(key, case, why).records.items():
                    children[table].extend(rows)
            return SampleOutput(ResultRecord.model_validate(base), children)

    async def _answer(
        self, case: TestCase, lane: Lane, errors: SampleErrors, key: SampleKey
    ) -> TargetResponse | None:
        template_error = lane.case_errors.get(case.id)
        if template_error is not None:
            # Known before the run: the candidate's templates cannot render this case.
            errors.add("template", template_error)
            return None
        try:
            return await lane.respond(case, key)
        except TargetError as exc:
            errors.add("target", str(exc))
        except Exception as exc:  # a bug in one target call must not stop the run
            errors.add("target", f"{type(exc).__name__}: {exc}")
        return None

    async def _score(
        self,
        key: SampleKey,
        case: TestCase,
        response: str,
        errors: SampleErrors,
        turns: tuple[TurnReply, ...] = (),
    ) -> tuple[list[ScoreOutcome], dict[str, Any]]:
        fields: dict[str, Any] = {}
        outcomes: list[ScoreOutcome] = []
        for stage in self.stages:
            sample = SampleInput(
                key=key, case=case, response=response, values=dict(fields), turns=turns
            )
            got = await asyncio.gather(*(self._one(scorer, sample) for scorer in stage))
            for scorer, outcome in zip(stage, got, strict=True):
                if isinstance(outcome, Failed):
                    errors.add(scorer.name, outcome.message)
                    # Answered calls were paid even though the scorer failed: the error row
                    # carries their tokens and cost.
                    outcomes.append(ScoreOutcome(usage=outcome.paid))
                    continue
                outcomes.append(outcome)
                fields.update(outcome.fields)
        return outcomes, fields

    async def _one(self, scorer: Scorer, sample: SampleInput) -> ScoreOutcome | Failed:
        """The scorer's checked outcome, or why it failed (after retrying transient errors).
        Either way the calls its failed attempts paid for are counted in the usage."""
        paid = Usage()
        for attempt in range(self.retries + 1):
            with metering() as meter:
                try:
                    outcome = await scorer.score(sample)
                except ScorerError as exc:
                    paid = paid + meter.usage
                    if not exc.transient:
                        return Failed(str(exc), paid)
                    if attempt == self.retries:
                        return Failed(f"{exc} (after {attempt + 1} attempts)", paid)
                    await asyncio.sleep(min(0.5 * 2**attempt, 8.0))
                    continue
                except Exception as exc:  # a bug in one scorer must not stop the run
                    return Failed(f"{type(exc).__name__}: {exc}", paid + meter.usage)
            checked = _checked(scorer, outcome)
            if isinstance(checked, str):
                return Failed(checked, paid + outcome.usage)
            return replace(checked, usage=checked.usage + paid) if paid.calls else checked
        raise AssertionError("unreachable: the last attempt returns")  # pragma: no cover


@dataclass(frozen=True)
class Failed:
    """Why a scorer failed on a sample, and what its answered calls cost before it did."""

    message: str
    paid: Usage


def _checked(scorer: Scorer, outcome: ScoreOutcome) -> ScoreOutcome | str:
    """The outcome, or why it breaks its scorer's declaration."""
    undeclared = sorted(set(outcome.fields) - set(scorer.provides))
    if undeclared:
        return f"returned fields it does not declare: {undeclared}"
    tables = sorted(t for t, rows in outcome.records.items() if rows and t not in scorer.tables)
    if tables:
        return f"wrote tables it does not declare: {tables}"
    return outcome
