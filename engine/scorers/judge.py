"""The judge as a scorer: answer-synthesis rubric, claim verdicts and the RAG metrics.

``engine.scoring.judging.judge_sample`` does the scoring (claims extracted once, their
verdicts reused); this file adapts it to the ``Scorer`` contract and says how many calls
it makes, so estimates come from the same place as the calls.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from engine.judges.asks import asking, current_ask
from engine.judges.base import Judge, JudgeError, JudgeGaveUp, Usage
from engine.judges.http.batched import batch_calls
from engine.judges.local.judge import LocalJudge
from engine.models import RagWeights, RunConfig, SampleKey, TestCase
from engine.pricing import model_prices
from engine.scorers.base import (
    AnswerEstimate,
    BaseScorer,
    CallEstimate,
    SampleInput,
    ScoreOutcome,
    ScorerContext,
    ScorerError,
    ScorerFactory,
    no_calls,
)
from engine.scorers.batching import BatchPool, BatchWorker
from engine.scorers.parts import JudgeOutcomeLike, JudgeSample
from engine.scorers.registry import register
from engine.scoring.judging import reference_text
from engine.scoring.panel import Ask, ask_records, combine
from engine.text import split_sentences
from engine.verifier.choice import LOCAL_VERIFIERS, ClaimVerifier

JUDGE_BATCH = 16
"""Most samples the local judge scores in one worker-thread batch."""

JUDGE_FIELDS = frozenset(
    {
        "judge_faithfulness",
        "judge_completeness",
        "judge_reasoning",
        "faithfulness_reasoning",
        "completeness_reasoning",
        "passed",
        "overall",
        "claim_faithfulness",
        "rag_correctness",
        "rag_faithfulness",
        "rag_precision",
        "rag_recall",
        "rag_relevance",
        "rag_overall",
    }
)
"""The ``results`` fields the judge fills."""

_USAGE_FIELDS = ("judge_input_tokens", "judge_output_tokens")


CASCADE_PASS_AT = 5.0
"""``--cascade``: the local judge's pass stands when both its rubric scores reach this."""
CASCADE_FAIL_AT = 2.0
"""``--cascade``: the local judge's fail stands when a rubric score is at or below this."""


def clear_decision(outcome: JudgeOutcomeLike) -> bool:
    """Whether the local judge's pass/fail is clear enough to skip the LLM: both rubric
    scores at the top (a clear pass), or one at the bottom (a clear fail: contradicted or
    unsupported claims, an empty or evasive answer). An answer that says nothing is decided
    locally (there is no claim to judge); one with a claim verdict below the confidence bar
    (flag ``low_confidence``) goes to the LLM whatever its scores."""
    fields = outcome.result_fields()
    flags = set(fields.get("flags") or ())
    if flags & {"empty_response", "abstained"}:
        return True
    if "low_confidence" in flags:
        return False
    given = (fields.get("judge_faithfulness"), fields.get("judge_completeness"))
    scores = [float(x) for x in given if isinstance(x, int | float)]
    if len(scores) < len(given):
        return False
    low = min(scores)
    return low >= CASCADE_PASS_AT or low <= CASCADE_FAIL_AT


class JudgeScorer(BaseScorer):
    """Scores a sample with ``judge_sample`` and one judge; with ``cascade_judge`` (the
    local judge) that one scores first and the sample reaches ``judge`` only when its
    decision is not clear (``clear_decision``). The local judge computes rather than
    waits, so its samples are judged in batches in a worker thread (one embedding pass
    per batch), never on the event loop."""

    name = "judge"
    provides = JUDGE_FIELDS | {"scored_by"}
    tables = frozenset({"verdicts", "judge_asks"})

    def __init__(
        self,
        judge: Judge,
        judge_sample: JudgeSample,
        weights: RagWeights,
        *,
        cascade_judge: Judge | None = None,
        batch: int = JUDGE_BATCH,
        pool: BatchPool | None = None,
        jury: Sequence[Judge] = (),
        repeats: int = 1,
        record_asks: bool = False,
    ) -> None:
        self._judge = judge
        self._panel = [judge, *jury]
        self._repeats = repeats
        # Asks are kept whenever they can disagree: several judges, or an LLM judge asked
        # about an answer again (in this iteration or the next).
        self._record = len(self._panel) > 1 or (
            record_asks and any(j.name != "local" for j in self._panel)
        )
        self._judge_sample = judge_sample
        self._weights = weights
        self._cheap = cascade_judge
        self._path = "local" if judge.name == "local" else "llm"
        local = [j for j in (judge, cascade_judge) if isinstance(j, LocalJudge)]
        self._local: LocalJudge | None = local[0] if local else None
        self._worker: BatchWorker[tuple[TestCase, str], JudgeOutcomeLike] = BatchWorker(
            self.judge_batch, batch, pool=pool, kind=self.name, sample_of=_sample_of
        )

    async def score(self, sample: SampleInput) -> ScoreOutcome:
        """Judge one response. A judge error is transient unless the judge's own client
        already retried it."""
        if self._cheap is not None:
            cheap = await self._judged(sample, self._cheap)
            if clear_decision(cheap):
                return self._outcome(sample, cheap, "local")
        try:
            asks = await self._asks(sample)
        except JudgeGaveUp as exc:
            raise ScorerError(f"{type(exc).__name__}: {exc}") from exc
        except JudgeError as exc:
            raise ScorerError(f"{type(exc).__name__}: {exc}", transient=True) from exc
        if len(asks) == 1 and not self._record:
            return self._outcome(sample, asks[0][2], self._path)
        fields, flags = combine([Ask(name, i, o.result_fields()) for name, i, o in asks])
        panel = _PanelOutcome(
            fields={**fields, "flags": [*(fields.get("flags") or ()), *flags]},
            first=asks[0][2],
            usage=sum((o.usage for _, _, o in asks), Usage()),
        )
        outcome = self._outcome(sample, panel, self._path)
        rows = ask_records(sample.key, [Ask(name, i, o.result_fields()) for name, i, o in asks])
        return replace(outcome, records={**outcome.records, "judge_asks": rows})

    async def _asks(self, sample: SampleInput) -> list[tuple[str, int, JudgeOutcomeLike]]:
        """Every ask of every judge of the panel, each a call of its own (ask index
        ``engine.judges.asks``): the iteration's first index plus the repeat. The local
        judge is deterministic and is asked once."""
        first = current_ask()

        async def one(judge: Judge, repeat: int) -> tuple[str, int, JudgeOutcomeLike]:
            with asking(first + repeat):
                return judge.name, repeat, await self._judged(sample, judge)

        return list(
            await asyncio.gather(
                *(
                    one(judge, repeat)
                    for judge in self._panel
                    for repeat in range(1 if judge.name == "local" else self._repeats)
                )
            )
        )

    async def _judged(self, sample: SampleInput, judge: Judge) -> JudgeOutcomeLike:
        if judge is not self._local:
            return await self._judge_sample(sample.case, sample.response, judge, self._weights)
        got = await self._worker.submit((sample.case, sample.response))
        if isinstance(got, BaseException):
            raise got
        return got

    def judge_batch(
        self, items: list[tuple[TestCase, str]]
    ) -> list[JudgeOutcomeLike | BaseException]:
        """Judge a batch with the local judge (in the worker thread or process): embed
        what every sample needs in one pass, then judge them all on this thread's own
        loop."""
        judge = self._local
        assert judge is not None
        judge.prefetch(
            [(c.query, text, reference_text(c), c.effective_context) for c, text in items]
        )

        async def judge_all() -> list[JudgeOutcomeLike | BaseException]:
            return await asyncio.gather(
                *(self._judge_sample(c, text, judge, self._weights) for c, text in items),
                return_exceptions=True,
            )

        return asyncio.run(judge_all())

    async def aclose(self) -> None:
        """Stop the local judge's batching task."""
        await self._worker.aclose()

    def _outcome(self, sample: SampleInput, outcome: JudgeOutcomeLike, path: str) -> ScoreOutcome:
        fields = {**outcome.result_fields(), "scored_by": path}
        flags = [str(f) for f in fields.pop("flags", None) or ()]
        for name in _USAGE_FIELDS:  # the pipeline adds usage up once, from ``usage``
            fields.pop(name, None)
        # The analyzer owns the ``abstained`` column (it also reads embeddings); the judge's
        # own detection shows as its flag.
        if fields.pop("abstained", None):
            flags.append("abstained")
        flags.extend(f"judge_warning:{w}"[:200] for w in getattr(outcome, "warnings", ()) or ())
        return ScoreOutcome(
            fields=fields,
            records={"verdicts": list(outcome.verdict_records(sample.key))},
            usage=outcome.usage,
            flags=tuple(flags),
        )


@dataclass(frozen=True)
class _PanelOutcome:
    """A panel's combined judge outcome: the combined fields, the first ask's verdicts
    (claims extracted by different asks do not line up one to one) and every ask's cost."""

    fields: dict[str, Any]
    first: JudgeOutcomeLike
    usage: Usage

    def result_fields(self) -> dict[str, Any]:
        return dict(self.fields)

    def verdict_records(self, key: SampleKey) -> Any:
        return self.first.verdict_records(key)

    @property
    def warnings(self) -> tuple[str, ...]:
        return tuple(getattr(self.first, "warnings", ()) or ())


def local_verifier(config: RunConfig) -> ClaimVerifier | None:
    """The run's verifier when it computes here (the cascade's local judge uses it)."""
    from engine.verifier.choice import build_verifier

    return build_verifier(config.verifier) if config.verifier in LOCAL_VERIFIERS else None


def pooled_judge(config: RunConfig) -> bool:
    """Whether the run's local judge (its judge, or the cascade's first) may judge in the
    run's worker processes: only when it computes everything itself. A verifier over HTTP
    keeps its calls on the event loop, where the run's limits on calls in flight hold."""
    local = config.judge == "local" or config.cascade
    return local and config.embedder == "local" and config.verifier in LOCAL_VERIFIERS


def _sample_of(item: tuple[TestCase, str]) -> tuple[str, str]:
    case, text = item
    return case.id, text


CHARS_PER_TOKEN = 4
PROMPT_OVERHEAD_TOKENS = 350
"""Instructions and JSON scaffolding of one judge prompt."""
JUDGE_OUTPUT_TOKENS = 120
TARGET_OUTPUT_TOKENS = 250
"""Length assumed for an answer a target has yet to give."""
UNKNOWN_RESPONSE_CLAIMS = 5
"""Claims assumed in an answer a target has yet to give."""


def tokens(text: str) -> int:
    """Tokens of ``text``, estimated as characters / 4."""
    return max(1, len(text) // CHARS_PER_TOKEN)


def judge_calls(case: TestCase, response: str | None, *, batched: bool = False) -> int:
    """LLM calls ``judge_sample`` makes for one answer: one claim extraction, one rubric,
    one relevance, one correctness when there is a reference, and the verifications.

    One call per claim (its sentences; 5 when the answer is not known yet) and one
    chunk-use call per context chunk (RAG precision); ``batched``: one call per
    ``engine.judges.http.batched.CLAIMS_PER_CALL`` claims when there is context (none without,
    and none for precision: the verdicts name the chunks)."""
    chunks = sum(1 for c in case.effective_context if c.strip())
    has_reference = bool(case.expected_answer.text.strip() or case.expected_answer.claims)
    if batched:
        verify = batch_calls(_response_claims(response)) if chunks else 0
        return 3 + int(has_reference) + verify
    return 3 + _response_claims(response) + int(has_reference) + chunks


def _response_claims(response: str | None) -> int:
    return max(1, len(split_sentences(response))) if response else UNKNOWN_RESPONSE_CLAIMS


def local_decider(config: RunConfig) -> Callable[[TestCase, str | None], bool] | None:
    """For ``--cascade`` estimates: whether the local judge decides an answer clearly, run
    on the recorded answer (local work, no remote call). None when the run does not
    cascade or its embedder is remote; an answer a target has yet to give is undecided."""
    if not config.cascade or config.judge == "local" or config.embedder != "local":
        return None
    import asyncio

    from engine.embedders.local import LocalEmbedder
    from engine.judges.local.judge import LocalJudge
    from engine.scoring.judging import judge_sample

    judge: list[LocalJudge] = []

    def decided(case: TestCase, response: str | None) -> bool:
        if response is None:
            return False
        if not judge:
            judge.append(LocalJudge(LocalEmbedder(), verifier=local_verifier(config)))
        outcome = asyncio.run(judge_sample(case, response, judge[0], weights=config.rag_weights))
        return clear_decision(outcome)

    return decided


def estimate_judge(config: RunConfig) -> AnswerEstimate:
    """What the judges spend on one answer: every LLM judge of the panel ``judge_repeats``
    times (nothing for the local judge; nothing for an answer ``--cascade`` leaves to the
    local judge)."""
    llm = [spec for spec in config.judges if spec != "local"]
    if not llm:
        return no_calls(config)
    decided = local_decider(config)
    asks = [(one_ask(config, spec), config.judge_repeats) for spec in llm]

    def per_answer(case: TestCase, response: str | None) -> CallEstimate:
        if decided is not None and decided(case, response):
            return CallEstimate()
        total = CallEstimate()
        for estimate, times in asks:
            one = estimate(case, response)
            total = total + CallEstimate(
                one.calls * times,
                one.input_tokens * times,
                one.output_tokens * times,
                one.cost_usd * times,
            )
        return total

    return per_answer


def one_ask(config: RunConfig, spec: str) -> AnswerEstimate:
    """What one ask of the LLM judge ``spec`` spends on one answer."""
    price_in, price_out = model_prices(spec, config.prices)
    batched = config.judge_calls == "batched"

    def per_answer(case: TestCase, response: str | None) -> CallEstimate:
        calls = judge_calls(case, response, batched=batched)
        context = "\n".join(case.effective_context) or " "
        answer = tokens(response) if response else TARGET_OUTPUT_TOKENS
        per_call = PROMPT_OVERHEAD_TOKENS + tokens(case.query) + answer
        # the verifications and the rubric carry the whole context (a batched
        # verification carries it once per call)
        claims = _response_claims(response)
        carried = batch_calls(claims) if batched else claims
        sent = calls * per_call + (carried + 1) * tokens(context)
        received = calls * JUDGE_OUTPUT_TOKENS
        return CallEstimate(calls, sent, received, (sent * price_in + received * price_out) / 1e6)

    return per_answer


def _build(context: ScorerContext) -> JudgeScorer:
    parts = context.parts
    cheap = None
    if context.config.cascade and parts.judge.name != "local":
        assert parts.embedder is not None, "the cascade's local judge needs the run's embedder"
        cheap = LocalJudge(parts.embedder, verifier=parts.verifier)
    config = context.config
    return JudgeScorer(
        parts.judge,
        parts.judge_sample,
        config.rag_weights,
        cascade_judge=cheap,
        pool=parts.pool if pooled_judge(config) else None,
        jury=parts.jury,
        repeats=config.judge_repeats,
        record_asks=config.judge_asked_again,
    )


register(ScorerFactory("judge", _build, estimate_judge))
