"""What a run would cost, computed without running it (``--estimate``).

Nothing is built and nothing is called: each lane says what its target call costs, and
each registered kind of scorer says what it calls per answer (``ScorerFactory.estimate``),
so the estimate counts exactly what the run would make. Candidate and grader files are
validated here too, so a broken file fails the estimate (exit 2) as it would fail the run.
"""

from __future__ import annotations

import json
import socket
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pyarrow.parquet as pq

from engine.candidates import Candidate
from engine.candidates.plan import run_files, template_errors, with_project
from engine.graders.options import JUDGED_TYPES
from engine.lake import list_parts
from engine.models import Conversation, RunConfig, TestCase
from engine.pricing import BATCH_PRICE_FACTOR, model_prices
from engine.scorers import SCORERS, CallEstimate
from engine.scorers.base import AnswerEstimate, sample_kind
from engine.scorers.judge import (
    PROMPT_OVERHEAD_TOKENS,
    TARGET_OUTPUT_TOKENS,
    tokens,
)
from engine.targets.candidate import candidate_model
from engine.testsets import LoadedTestSet
from engine.testsets.conversations import case_conversation

LLM_SECONDS_PER_CALL = 1.5
"""Assumed wall time of one remote call; calls overlap up to the run's concurrency."""
LOCAL_STARTUP_S = 14.0
"""Wall time a run spends before its first sample: the process starting, the embedder and
the claim verifier loading. Measured with ``LOCAL_SECONDS_PER_SAMPLE`` (below)."""
LOCAL_SECONDS_PER_SAMPLE = 0.5
"""Wall time of one sample's local work (embedding, the analyzer, the local judge's claim
verifier, cold caches), default workers. Measured on a 2-core development machine shared
with other work: ``evalhouse run --test-set demo-week-1.jsonl --no-ingest`` in a fresh
home took 34.7 s for 40 samples (``--only`` the first 40) and 182.6 s for all 330, so
0.51 s a sample and 14.3 s before the first. A faster machine's own runs replace both
(``measured_rate``); the figure this replaced (20 samples a second, a warm quiet machine)
promised 8 s for a run that took 90."""


@dataclass(frozen=True)
class Estimate:
    """What a run would cost, computed without running it (``--estimate``)."""

    target_calls: int
    judge_calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    seconds: float
    notes: tuple[str, ...] = ()

    def one_line(self) -> str:
        """The estimate in one line: ``1,650 calls · $0.41 · about 2m10s``, or ``local, no
        API calls · about 1m30s`` when everything is scored on this machine ("0 calls"
        read as "nothing to do")."""
        minutes, secs = divmod(round(self.seconds), 60)
        calls = self.target_calls + self.judge_calls
        if calls == 0:
            return f"local, no API calls · about {minutes}m{secs:02d}s"
        return f"{calls:,} calls · ${self.cost_usd:.2f} · about {minutes}m{secs:02d}s"

    def render(self) -> str:
        """A few human-readable lines, the one-line summary first."""
        minutes, secs = divmod(round(self.seconds), 60)
        lines = [
            f"estimate:      {self.one_line()}",
            f"target calls:  {self.target_calls:,}",
            f"judge calls:   {self.judge_calls:,}",
            f"tokens:        {self.input_tokens:,} in / {self.output_tokens:,} out",
            f"cost:          ${self.cost_usd:.4f}",
            f"time:          about {minutes}m{secs:02d}s",
        ]
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)


@dataclass(frozen=True)
class _LaneCost:
    """What one lane's target costs per case."""

    remote: bool
    prices: tuple[float, float]
    candidate: Candidate | None = None

    def call(self, case: TestCase) -> CallEstimate:
        """The target call answering ``case`` (none for recorded responses); a
        conversation's calls, one per assistant turn with the history so far."""
        if not self.remote:
            return CallEstimate()
        system = PROMPT_OVERHEAD_TOKENS
        if self.candidate is not None:
            system += tokens(self.candidate.system_prompt)
        conv = case_conversation(case)
        if conv is not None:
            return conversation_calls(conv, system, self.prices)
        sent = tokens(case.query) + system
        cost = (sent * self.prices[0] + TARGET_OUTPUT_TOKENS * self.prices[1]) / 1e6
        return CallEstimate(1, sent, TARGET_OUTPUT_TOKENS, cost)


def _lanes(config: RunConfig, candidates: Sequence[Candidate]) -> list[_LaneCost]:
    if not candidates:
        remote = config.target != "recorded"
        prices = (0.0, 0.0)
        if config.target.startswith("openai:"):
            prices = model_prices(config.target)
        return [_LaneCost(remote, prices)]
    lanes = []
    for candidate in candidates:
        prices = (0.0, 0.0)
        if candidate.runner == "llm_prompt":
            prices = model_prices(f"openai:{candidate_model(candidate, config.target)}")
        lanes.append(_LaneCost(True, prices, candidate))
    return lanes


_SAME_SPEED = ("judge", "embedder", "target", "concurrency")
"""Settings two runs must share for one's speed to predict the other's."""


def measured_rate(lake: Path, config: RunConfig) -> tuple[float, int] | None:
    """Samples per second after start-up (``LOCAL_STARTUP_S``) of the latest finished runs
    on this machine with the same judge, embedder, target and concurrency (median of up to
    five), and how many runs that is; None when there is none to go by. Start-up is taken
    out so a re-run of three samples is not promised a thirtieth of a long run's time."""
    columns = ["run_id", "status", "started_at", "finished_at", "samples", "iterations",
               "config", "host"]  # fmt: skip
    rates: dict[str, tuple[datetime, float]] = {}
    here = socket.gethostname()
    for part in list_parts(lake, ["runs"]):
        try:
            rows = pq.read_table(part.path, columns=columns).to_pylist()
        except Exception:  # unreadable parts are ingest's to report
            continue
        for row in rows:
            finished, started = row["finished_at"], row["started_at"]
            if row["status"] != "completed" or finished is None or row["host"] != here:
                continue
            seconds = (finished - started).total_seconds()
            try:
                stored = json.loads(row["config"])
            except (TypeError, ValueError):
                continue
            same = all(stored.get(k) == getattr(config, k) for k in _SAME_SPEED)
            if seconds > 0.05 and same:  # backdated demo runs take no time on their own clock
                scoring = max(seconds - LOCAL_STARTUP_S, seconds / 2)  # a short run's own half
                rates[row["run_id"]] = (finished, row["samples"] * row["iterations"] / scoring)
    latest = sorted(rates.values(), reverse=True)[:5]
    if not latest:
        return None
    return statistics.median(rate for _, rate in latest), len(latest)


def estimate_run(
    config: RunConfig,
    test_set: LoadedTestSet,
    *,
    only_sample_ids: set[str] | None = None,
    lake: Path | None = None,
) -> Estimate:
    """Expected calls, tokens, cost and time of a run (of ``only_sample_ids`` when given).

    Tokens are estimated as characters / 4. Time comes from the speed of the latest runs
    with the same judge, embedder and concurrency in ``lake`` (this machine's own
    measurement); without one it assumes ``LOCAL_STARTUP_S`` once, ``LOCAL_SECONDS_PER_SAMPLE``
    of local scoring per sample, and ``LLM_SECONDS_PER_CALL`` per remote call spread over
    the concurrency.
    """
    config = with_project(config)
    cases = [c for c in test_set.cases if only_sample_ids is None or c.id in only_sample_ids]
    candidates, grader_specs = run_files(config)
    lanes = _lanes(config, candidates)
    skipped = template_errors(candidates, cases) if candidates else {}
    kind = sample_kind(test_set.format)
    per_answer: list[tuple[str, AnswerEstimate]] = [
        (name, factory.estimate(config))
        for name, factory in SCORERS.items()
        if factory.samples == kind
    ]
    target = CallEstimate()
    scoring = CallEstimate()
    for lane in lanes:
        for case in cases:
            if lane.candidate is not None and (lane.candidate.id, case.id) in skipped:
                continue  # an error row, no call
            target = target + lane.call(case)
            known = case.response if not lane.remote else None
            for _, estimate in per_answer:
                scoring = scoring + estimate(case, known)
    n = config.iterations
    samples = len(cases) * len(lanes) * n
    remote_calls = (target.calls + scoring.calls) * n
    notes = _notes(config, test_set, cases, candidates, grader_specs, lanes, skipped)
    measured = measured_rate(lake, config) if lake is not None else None
    if measured is not None:
        rate, runs = measured
        seconds = LOCAL_STARTUP_S + samples / rate
        notes.append(
            f"time from {runs} earlier run(s) here at the same settings: {rate:.1f} samples/s "
            f"after {LOCAL_STARTUP_S:g} s to start"
        )
    else:
        seconds = LOCAL_STARTUP_S + samples * LOCAL_SECONDS_PER_SAMPLE
        seconds += remote_calls * LLM_SECONDS_PER_CALL / max(1, config.concurrency)
        notes.append(
            "time assumed (no earlier run here with this judge, embedder and concurrency): "
            f"{LOCAL_STARTUP_S:g} s to start, {LOCAL_SECONDS_PER_SAMPLE:g} s of local scoring "
            f"a sample, {LLM_SECONDS_PER_CALL:g} s per call"
        )
    if config.cascade and config.judge != "local":
        notes.append(_cascade_note(config, cases, lanes))
    if any(spec != "local" for spec in config.judges) and (config.judge_asked_again or config.jury):
        notes.append(_repeats_note(config, cases, lanes))
    judging = scoring.cost_usd * n  # every scorer's calls are the judge's
    if config.judge_mode == "batch":
        batch = judging * BATCH_PRICE_FACTOR
        notes.append(
            f"judge mode batch: judge calls ${batch:.4f} at the Batch API price "
            f"(${judging:.4f} live; answers within 24 h, what a batch fails is paid live)"
        )
        judging = batch
    return Estimate(
        target_calls=target.calls * n,
        judge_calls=scoring.calls * n,
        input_tokens=(target.input_tokens + scoring.input_tokens) * n,
        output_tokens=(target.output_tokens + scoring.output_tokens) * n,
        cost_usd=target.cost_usd * n + judging,
        seconds=seconds,
        notes=tuple(notes),
    )


def _cascade_note(config: RunConfig, cases: Sequence[TestCase], lanes: Sequence[_LaneCost]) -> str:
    """What ``--cascade`` saves: the judge's calls with it and without it."""
    with_cascade = SCORERS["judge"].estimate(config)
    without = SCORERS["judge"].estimate(config.model_copy(update={"cascade": False}))
    answers = [(case, None if lane.remote else case.response) for lane in lanes for case in cases]
    cascaded = sum(with_cascade(case, response).calls for case, response in answers)
    full = sum(without(case, response).calls for case, response in answers)
    saved = 1 - cascaded / full if full else 0.0
    return (
        f"cascade: {cascaded * config.iterations:,} judge calls instead of "
        f"{full * config.iterations:,} without it ({saved:.0%} fewer; answers a target has "
        "yet to give are counted as reaching the LLM)"
    )


def _repeats_note(config: RunConfig, cases: Sequence[TestCase], lanes: Sequence[_LaneCost]) -> str:
    """What asking the judges again costs: every ask of the run beside a single ask of
    ``judge`` per answer (iterations after the first ask afresh too, never from the cache)."""
    panel = SCORERS["judge"].estimate(config)
    once = SCORERS["judge"].estimate(config.model_copy(update={"judge_repeats": 1, "jury": ()}))
    answers = [(case, None if lane.remote else case.response) for lane in lanes for case in cases]
    n = config.iterations
    every = sum(panel(case, response).cost_usd for case, response in answers) * n
    single = sum(once(case, response).cost_usd for case, response in answers)
    judges = len(config.judges)
    asks = config.judge_repeats * n
    return (
        f"judge repeats: each answer asked {asks} time(s) ({config.judge_repeats} per "
        f"iteration x {n} iteration(s)) by {judges} judge(s) at temperature "
        f"{config.effective_judge_temperature:g}: ${every:.4f} for the judges, "
        f"${max(0.0, every - single):.4f} of it beyond one ask per answer"
    )


def _notes(
    config: RunConfig,
    test_set: LoadedTestSet,
    cases: Sequence[TestCase],
    candidates: Sequence[Candidate],
    grader_specs: Sequence[object],
    lanes: Sequence[_LaneCost],
    skipped: dict[tuple[str, str], str],
) -> list[str]:
    notes = [f"{len(cases)} of {len(test_set.cases)} cases, {config.iterations} iteration(s)"]
    rubrics = sum(1 for g in grader_specs if getattr(g, "type", "") == "llm-rubric")
    if candidates:
        notes.append(
            f"{len(candidates)} candidates x {len(cases)} cases"
            + (f"; {len(skipped)} answers skipped (template errors)" if skipped else "")
        )
    judged = sum(1 for g in grader_specs if getattr(g, "type", "") in JUDGED_TYPES)
    if grader_specs:
        notes.append(
            f"{len(grader_specs)} graders ({rubrics} llm-rubric: one judge call per answer each"
            + (f"; {judged} judged: g-eval, factuality, relevance, recall" if judged else "")
            + ")"
        )
    own = sorted({j for g in grader_specs if (j := getattr(g, "judge", None)) is not None})
    if own:
        notes.append(f"graders with their own judge: {', '.join(own)} (counted above)")
    if config.judge == "local":
        notes.append(
            "local judge: no judge API calls, no judge cost"
            + (" (but for the graders' own judges)" if own else "")
        )
        if rubrics:
            notes.append(
                "llm-rubric graders need --judge openai:MODEL (or another LLM judge) unless "
                "every criterion of their rubric is one the local judge checks by rule"
            )
    elif model_prices(config.judge, config.prices) == (0.0, 0.0):
        notes.append(f"no price known for {config.judge}: judge cost counted as 0")
    if any(lane.prices == (0.0, 0.0) for lane in lanes if lane.candidate):
        notes.append("a candidate's model has no known price: its target cost counted as 0")
    if not candidates and config.target.startswith("http"):
        notes.append("http target: cost not known, counted as 0")
    convs = [conv for c in cases if (conv := case_conversation(c)) is not None]
    if convs:
        notes.append(conversation_note(convs, remote=any(lane.remote for lane in lanes)))
    missing = sum(1 for c in cases if c.response is None and case_conversation(c) is None)
    if not candidates and config.target == "recorded" and missing:
        notes.append(f"{missing} cases have no recorded response and will be error rows")
    return notes


def conversation_calls(
    conv: Conversation, system_tokens: int, prices: tuple[float, float]
) -> CallEstimate:
    """A conversation's target calls: one per assistant turn, each sending the system
    prompt and every turn before it (replies yet to be generated counted at
    ``TARGET_OUTPUT_TOKENS``), so tokens grow with the square of the conversation's length."""
    sent = 0
    calls = 0
    history = 0
    for t in conv.turns:
        if t.role == "user":
            history += tokens(t.content)
            continue
        sent += system_tokens + history
        calls += 1
        history += TARGET_OUTPUT_TOKENS
    received = calls * TARGET_OUTPUT_TOKENS
    return CallEstimate(calls, sent, received, (sent * prices[0] + received * prices[1]) / 1e6)


def conversation_note(convs: Sequence[Conversation], *, remote: bool) -> str:
    """How a conversation test set is counted."""
    replies = sum(1 for c in convs for t in c.turns if t.role == "assistant")
    how = (
        "one target call per assistant turn, with the history so far"
        if remote
        else "recorded replies, no target call"
    )
    return (
        f"{len(convs)} conversations, {replies} assistant turns: {how}; an LLM judge makes one "
        "call per assistant turn plus two per conversation (retention, completeness)"
    )
