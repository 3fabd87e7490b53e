"""The runner: a test set in, evaluated records in the lake, crash-safe and resumable.

One run = N iterations over the test set. Per sample: the target answers (recorded, a
chat model or an HTTP endpoint), the response analyzer scores it (CPU-bound, sync: run in
one worker thread over batches of samples) while the judge scores it (async), and one
``ResultRecord`` plus its claim, highlight, attribution and verdict rows are buffered.

Crash safety (beyond the answer-synthesis spec, which saved records at iteration end):

* the buffer is flushed as atomic lake parts at least every ``FLUSH_EVERY`` samples or
  ``FLUSH_SECONDS`` seconds. A flush writes the child tables first and the ``results``
  part last: the results part is the commit marker of its samples;
* on resume the done set is read from the lake (sample ids in ``results`` parts of the
  run and iteration), so a flushed sample is never sent to a target or judge again. Child
  parts whose samples have no result (a kill between the two writes) are orphans: they are
  renamed to a dot-name that readers and ingest ignore, and the samples are redone;
* ``iteration-N/.progress.json`` (the spec's structure) is rewritten atomically after
  every flush; it mirrors the lake and is never ahead of it.

A kill -9 therefore loses at most the samples in flight, and a resumed run ends with
exactly one result row per (iteration, sample, candidate).

Candidates and graders (issue 7): a run whose ``RunConfig.extra`` names candidates
(``--candidates``) evaluates every case once per candidate, each with its own target
built from the candidate file; a run that names graders (``--graders``) grades every
output with them and writes one ``grader_scores`` row per (iteration, sample,
candidate, grader), flushed with the sample's other child rows, before its result.
Without either, a run is exactly what it was (candidate ``""``, no grader rows).

Run states go to the ``runs`` table (iteration 0): running, then completed / failed (too
many error rows) / cancelled (Ctrl-C, SIGTERM) / interrupted (an unexpected exception). A
run left "running" by a dead process (its lock file is free) is resumed by re-running the
same command.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib.metadata
import json
import math
import os
import secrets
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Protocol

import pyarrow.parquet as pq
from pydantic import ValidationError

from engine.candidate_run import (
    RESPONSES,
    CandidatePlan,
    CandidateRunSpec,
    failed_sample_rows,
    grade_sample_with_usage,
    plan_for_run,
    project_digest,
    run_files,
    template_errors,
)
from engine.candidates import Candidate
from engine.errors import InputError
from engine.judges.base import Judge, JudgeError, Usage
from engine.lake import CHILD_TABLES, list_parts, read_table, sweep_orphans, write_part
from engine.models import (
    AttributionRecord,
    ClaimRecord,
    HighlightRecord,
    IterationMetricsRecord,
    RagWeights,
    ResultRecord,
    RunConfig,
    RunRecord,
    RunStatus,
    SampleKey,
    TestCase,
    VerdictRecord,
)
from engine.progress import (
    NullProgress,
    ProgressEntry,
    ProgressSink,
    progress_file_path,
    write_progress_file,
)
from engine.scoring.synthesis import SynthesisOutcome, low_faithfulness_analysis
from engine.scoring.synthesis import iteration_metrics as synthesis_iteration_metrics
from engine.settings import Paths
from engine.targets import Target, TargetError, TargetResponse, build_target
from engine.targets.candidate import build_candidate_target, candidate_model
from engine.testsets import LoadedTestSet, case_hash
from engine.text import split_sentences

try:  # POSIX advisory locks tell a live run from a dead one; elsewhere pids do.
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

FLUSH_EVERY = 50
"""Flush the buffer once it holds this many samples..."""
FLUSH_SECONDS = 5.0
"""...or this many seconds after the previous flush, whichever comes first."""
ANALYZE_BATCH = 16
"""Most samples handed to the analyzer thread at once."""
"""Tables written before ``results`` in a flush (the results part commits them)."""
RESUMABLE: frozenset[str] = frozenset({"running", "interrupted", "cancelled"})
EXIT_OK, EXIT_FAILED_SAMPLES, EXIT_CANCELLED = 0, 1, 130


class RunError(InputError):
    """The run cannot start or resume (bad resume id, changed test set, run in use).

    The CLI prints the message and exits with code 2.
    """


# ----------------------------------------------------------------------------- public types


@dataclass(frozen=True)
class RunOutcome:
    """How a run ended; ``exit_code`` is what ``evalhouse run`` exits with."""

    run_id: str
    status: str
    samples: int
    errors: int
    failed_fraction: float
    cost_usd: float
    exit_code: int
    """0 ok, 1 more failed samples than ``max_failed_fraction`` allows, 130 cancelled."""


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

    def render(self) -> str:
        """A few human-readable lines."""
        minutes, secs = divmod(round(self.seconds), 60)
        lines = [
            f"target calls:  {self.target_calls:,}",
            f"judge calls:   {self.judge_calls:,}",
            f"tokens:        {self.input_tokens:,} in / {self.output_tokens:,} out",
            f"cost:          ${self.cost_usd:.4f}",
            f"time:          about {minutes}m{secs:02d}s",
        ]
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)


class AnalysisLike(Protocol):
    """What the runner needs of ``engine.scoring.analyzer.Analysis``."""

    def result_fields(self) -> dict[str, Any]:
        """Columns of ``results`` this analysis fills."""
        ...

    def claim_records(self, key: SampleKey) -> Sequence[ClaimRecord]:
        """Rows of ``claims``."""
        ...

    def highlight_records(self, key: SampleKey) -> Sequence[HighlightRecord]:
        """Rows of ``highlights``."""
        ...

    def attribution_records(self, key: SampleKey) -> Sequence[AttributionRecord]:
        """Rows of ``attributions``."""
        ...


class AnalyzerLike(Protocol):
    """What the runner needs of ``engine.scoring.analyzer.ResponseAnalyzer``."""

    def analyze_batch(self, items: Sequence[tuple[TestCase, str]]) -> list[Any]:
        """One Analysis (or an error object) per item, in order."""
        ...


class OutcomeLike(Protocol):
    """What the runner needs of ``engine.scoring.judging.JudgeOutcome``."""

    @property
    def usage(self) -> Usage:
        """Tokens, cost and calls of the judge for this sample."""
        ...

    def result_fields(self) -> dict[str, Any]:
        """Columns of ``results`` the judge fills."""
        ...

    def verdict_records(self, key: SampleKey) -> Sequence[VerdictRecord]:
        """Rows of ``verdicts``."""
        ...


JudgeSample = Callable[[TestCase, str, Judge, RagWeights], Awaitable[OutcomeLike]]


@dataclass
class Components:
    """The parts a run composes; built from the config, or injected by tests."""

    target: Target
    analyzer: AnalyzerLike
    judge: Judge
    judge_sample: JudgeSample
    embedder_name: str
    judge_name: str
    claim_threshold: float | None = None
    judge_prompt_version: str = ""
    closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    embedder: Any = None
    """The embedder (``engine.embedders.base.Embedder``) semantic-similarity graders use."""
    plan: CandidatePlan | None = None
    """Candidates and graders; None builds them from ``RunConfig.extra`` when it asks."""
    candidate_targets: dict[str, Target] = field(default_factory=dict)
    """Target per candidate id; candidates missing here get one built from their file."""
    grade_timer: Callable[[float], None] | None = None
    """Called with the seconds each sample's grading took (benchmarks)."""

    async def aclose(self) -> None:
        """Release HTTP clients of the targets and judge."""
        await self.target.aclose()
        for target in self.candidate_targets.values():
            with contextlib.suppress(Exception):
                await target.aclose()
        for close in self.closers:
            with contextlib.suppress(Exception):
                await close()


def build_components(config: RunConfig, paths: Paths) -> Components:
    """Build target, embedder, analyzer and judge from the config (the real path)."""
    from engine.embedders.factory import build_embedder
    from engine.judges.factory import build_judge
    from engine.scoring.analyzer import ResponseAnalyzer
    from engine.scoring.judging import judge_sample

    target = build_target(config.target, extra=config.extra, retries=config.retries)
    embedder = build_embedder(config.embedder, paths.cache)
    analyzer = ResponseAnalyzer(embedder, config.analyzer)
    prices = config.extra.get("prices")
    judge = build_judge(
        config.judge,
        embedder=embedder,
        cache_dir=paths.cache,
        concurrency=config.concurrency,
        prices=prices if isinstance(prices, Mapping) else None,
    )

    async def judged(case: TestCase, response: str, j: Judge, weights: RagWeights) -> Any:
        return await judge_sample(case, response, j, weights=weights)

    closers: list[Callable[[], Awaitable[None]]] = []
    for part in (judge, embedder):
        close = getattr(part, "aclose", None)
        if close is not None and asyncio.iscoroutinefunction(close):
            closers.append(close)
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
    )


# ----------------------------------------------------------------------------- helpers


def new_run_id(now: datetime | None = None) -> str:
    """A run id sortable by start time: ``20261122T071500Z-ab12cd``."""
    now = now or datetime.now(UTC)
    return f"{now.strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(3)}"


def _utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def _version() -> str:
    try:
        return importlib.metadata.version("evalhouse")
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"


def _git_commit() -> str | None:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    sha = done.stdout.strip()
    return sha if done.returncode == 0 and len(sha) == 40 else None


def sample_hash(sample_id: str) -> str:
    """The spec's progress hash: sha256 of the sample id (``queryLogId``)."""
    return hashlib.sha256(sample_id.encode("utf-8")).hexdigest()


def _result_summary(row: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "faithfulnessScore": row.get("judge_faithfulness"),
        "completenessScore": row.get("judge_completeness"),
        "passed": row.get("passed"),
        "accuracy": row.get("accuracy"),
        "completeness": row.get("completeness"),
        "attribution": row.get("attribution"),
        "error": row.get("error"),
    }


def _progress_entry(row: Mapping[str, Any]) -> ProgressEntry:
    """The progress-file entry of a result row. The spec hashes the sample id; a
    candidate's row hashes ``candidate/sample_id`` so entries stay unique per candidate."""
    sample_id = str(row["sample_id"])
    candidate = row.get("candidate") or ""
    summary = _result_summary(row)
    if candidate:
        summary["candidate"] = candidate
    return ProgressEntry(
        hash=sample_hash(f"{candidate}/{sample_id}" if candidate else sample_id),
        query_log_id=sample_id,
        question=str(row.get("query") or ""),
        completed_at=row["scored_at"],
        result=summary,
    )


_PACE_FIELDS = ("concurrency", "retries", "max_failed_fraction")


def _computing_config(config_json: str) -> dict[str, Any]:
    """The config minus what only sets the pace (those may change when a run resumes)."""
    try:
        data = json.loads(config_json)
    except json.JSONDecodeError:
        return {}
    return (
        {k: v for k, v in data.items() if k not in _PACE_FIELDS} if isinstance(data, dict) else {}
    )


@dataclass(frozen=True)
class _RunState:
    run_id: str
    name: str
    status: str
    test_set_hash: str
    started_at: datetime
    updated_at: datetime
    config: str


def _latest_run_states(lake: Path) -> dict[str, _RunState]:
    """The latest state of every run in the lake (small: a few parts per run)."""
    latest: dict[str, _RunState] = {}
    columns = ["run_id", "name", "status", "test_set_hash", "started_at", "updated_at", "config"]
    for part in list_parts(lake, ["runs"]):
        try:
            rows = pq.read_table(part.path, columns=columns).to_pylist()
        except Exception:  # an unreadable part is ingest's to report; skip it here
            continue
        for row in rows:
            state = _RunState(**row)
            seen = latest.get(state.run_id)
            if seen is None or state.updated_at >= seen.updated_at:
                latest[state.run_id] = state
    return latest


class _RunLock:
    """An exclusive advisory lock held while a process runs a run id.

    The kernel drops it when the process dies (kill -9 included), which is how a
    "running" run with a dead process is told from a live one.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle: IO[str] | None = None

    def try_acquire(self) -> bool:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held for the run
        if fcntl is not None:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                handle.close()
                return False
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()} {socket.gethostname()}\n")
        handle.flush()
        self._handle = handle
        return True

    def holder(self) -> str:
        with contextlib.suppress(OSError):
            return self.path.read_text(encoding="utf-8").strip()
        return "unknown"

    def release(self) -> None:
        if self._handle is not None:
            if fcntl is not None:
                with contextlib.suppress(OSError):
                    fcntl.flock(self._handle.fileno(), fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None


@dataclass
class _SampleOutput:
    result: ResultRecord
    children: dict[str, list[Any]]


@dataclass(frozen=True)
class _Lane:
    """One producer of responses: the run's target, or one candidate's."""

    candidate: str
    """Candidate id written on the records ("" for the run's own target)."""
    target: Target
    graded_as: Candidate | None = None
    """The candidate the plan grades this lane's outputs as; None when nothing grades."""


def _key(sample_id: str, candidate: str | None) -> tuple[str, str]:
    return (sample_id, candidate or "")


def _part_keys(path: Path) -> set[tuple[str, str]] | None:
    """(sample_id, candidate) of every row of a lake part; None when it cannot be read."""
    try:
        names = pq.read_schema(path).names
        columns = ["sample_id", "candidate"] if "candidate" in names else ["sample_id"]
        rows = pq.read_table(path, columns=columns).to_pylist()
    except Exception:
        return None
    return {_key(r["sample_id"], r.get("candidate")) for r in rows}


@dataclass
class _Totals:
    done: int = 0
    total: int = 0
    cost_usd: float = 0.0
    new_samples: int = 0
    started: float = field(default_factory=time.monotonic)


# ----------------------------------------------------------------------------- analyzer thread


class _AnalyzerBatcher:
    """Feeds the sync, CPU-bound analyzer from one worker thread, in batches."""

    def __init__(self, analyzer: AnalyzerLike, batch: int = ANALYZE_BATCH) -> None:
        self.analyzer = analyzer
        self.batch = batch
        self.queue: asyncio.Queue[tuple[TestCase, str, asyncio.Future[Any]]] = asyncio.Queue()
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.task = asyncio.create_task(self._loop())

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task

    async def analyze(self, case: TestCase, response: str) -> Any:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        await self.queue.put((case, response, future))
        return await future

    async def _loop(self) -> None:
        while True:
            items = [await self.queue.get()]
            await asyncio.sleep(0)  # let samples that are ready join this batch
            while len(items) < self.batch and not self.queue.empty():
                items.append(self.queue.get_nowait())
            live = [item for item in items if not item[2].done()]
            if not live:
                continue
            pairs = [(case, response) for case, response, _ in live]
            try:
                results = await asyncio.to_thread(self.analyzer.analyze_batch, pairs)
                if len(results) != len(pairs):
                    raise RuntimeError(f"analyzer returned {len(results)} results for {len(pairs)}")
            except Exception:
                # Isolate the sample that broke the batch: the others still get scored.
                results = []
                for pair in pairs:
                    try:
                        results.extend(await asyncio.to_thread(self.analyzer.analyze_batch, [pair]))
                    except Exception as exc:
                        results.append(exc)
            for (_, _, future), result in zip(live, results, strict=True):
                if not future.done():
                    future.set_result(result)


def _analysis_error(item: Any) -> str | None:
    """The error text of an analyzer result, None for a successful Analysis."""
    if hasattr(item, "result_fields") and not isinstance(item, BaseException):
        return None
    for attr in ("message", "reason", "error"):
        text = getattr(item, attr, None)
        if isinstance(text, str) and text:
            return text
    return f"{type(item).__name__}: {item}"


# ----------------------------------------------------------------------------- the runner


class _Runner:
    def __init__(
        self,
        config: RunConfig,
        paths: Paths,
        test_set: LoadedTestSet,
        *,
        resume_run_id: str | None,
        after_flush: Callable[[], None] | None,
        progress: ProgressSink | None,
        only_sample_ids: set[str] | None,
        components: Components | None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.config = config
        self.paths = paths
        self.test_set = test_set
        self.resume_run_id = resume_run_id
        self.after_flush = after_flush
        self.progress: ProgressSink = progress or NullProgress()
        self.components = components
        cases = test_set.cases
        if only_sample_ids is not None:
            unknown = sorted(only_sample_ids - {c.id for c in cases})
            if unknown:
                raise RunError(f"sample ids not in the test set: {', '.join(unknown[:10])}")
            cases = tuple(c for c in cases if c.id in only_sample_ids)
        self.cases = cases
        self.run_id = ""
        self.clock = clock or _utcnow
        self.started_at = self.clock()
        self.lock: _RunLock | None = None
        self.stop = threading.Event()  # set by Ctrl-C / SIGTERM
        self.abandon = threading.Event()  # second Ctrl-C: cancel what is in flight
        self.flush_lock: asyncio.Lock | None = None
        self.buffer: list[_SampleOutput] = []
        self.last_flush = time.monotonic()
        self.totals = _Totals()
        self.entries: dict[int, list[ProgressEntry]] = {}
        self.meta: dict[str, Any] = {}
        self.plan: CandidatePlan | None = None
        self.lanes: list[_Lane] = []

    # ------------------------------------------------------------------ run identity
    def _lock_for(self, run_id: str) -> _RunLock:
        return _RunLock(self.paths.progress / run_id / ".lock")

    def _resolve_run(self) -> tuple[str, RunConfig, datetime, bool]:
        """(run_id, config, started_at, resumed)."""
        states = _latest_run_states(self.paths.lake)
        if self.resume_run_id is not None:
            state = states.get(self.resume_run_id)
            if state is None:
                raise RunError(f"no run {self.resume_run_id!r} in {self.paths.lake}")
            if state.test_set_hash != self.test_set.sha256:
                raise RunError(
                    f"run {state.run_id} was made from a different test set (sha256 "
                    f"{state.test_set_hash[:12]}..., this file {self.test_set.sha256[:12]}...); "
                    "start a new run instead"
                )
            lock = self._lock_for(state.run_id)
            if not lock.try_acquire():
                raise RunError(
                    f"run {state.run_id} is running in another process ({lock.holder()})"
                )
            self.lock = lock
            stored = RunConfig.model_validate_json(state.config)
            # What the run computes comes from the stored config; how fast it goes and when
            # it counts as failed may change on resume.
            config = stored.model_copy(
                update={
                    "concurrency": self.config.concurrency,
                    "retries": self.config.retries,
                    "max_failed_fraction": self.config.max_failed_fraction,
                }
            )
            return state.run_id, config, state.started_at, True
        candidates = sorted(
            (
                s
                for s in states.values()
                if s.name == self.config.name
                and s.test_set_hash == self.test_set.sha256
                and s.status in RESUMABLE
            ),
            key=lambda s: s.run_id,
            reverse=True,
        )
        for state in candidates:
            if _computing_config(state.config) != _computing_config(self.config.model_dump_json()):
                continue  # same name, different settings: a new run, not a resume
            lock = self._lock_for(state.run_id)
            if lock.try_acquire():
                # The states were read before the lock: the run may have finished and let
                # go of its lock since. Resume it only if it is still resumable now.
                now = _latest_run_states(self.paths.lake).get(state.run_id)
                if now is not None and now.status in RESUMABLE:
                    self.lock = lock
                    return state.run_id, self.config, state.started_at, True
                lock.release()
                break
            # A live process runs it: leave it alone and start a new run id (issue 10).
            self.progress.message(
                f"run {state.run_id} ({state.name!r}) is running in another process "
                f"({lock.holder()}); starting a new run"
            )
            break
        run_id = new_run_id(self.clock().replace(tzinfo=UTC))
        lock = self._lock_for(run_id)
        if not lock.try_acquire():  # pragma: no cover - ids are random
            raise RunError(f"run id {run_id} is taken")
        self.lock = lock
        return run_id, self.config, self.clock(), False

    def _prepare_lanes(self, components: Components) -> None:
        """Plan candidates and graders and build a target per candidate, before any call.

        Raises InputError subclasses (malformed files, unknown ids, a grader that cannot
        be bound, a candidate without a model) and RunError when a resumed run's candidate
        or grader files changed since it started.
        """
        spec = CandidateRunSpec.from_extra(self.config.extra)
        plan = components.plan
        if plan is None and spec is not None:
            stored = self.config.extra.get("project_digest")
            if stored is not None and stored != project_digest(spec.project):
                raise RunError(
                    f"the candidate or grader files of {spec.project} changed since run "
                    f"{self.run_id} started; restore them or start a new run (another --name)"
                )
            plan = plan_for_run(
                spec, self.cases, embedder=components.embedder, judge=components.judge
            )
        self.plan = plan
        if plan is None:
            self.lanes = [_Lane("", components.target)]
            return
        if plan.candidates == (RESPONSES,):
            self.lanes = [_Lane("", components.target, RESPONSES)]
            return
        lanes: list[_Lane] = []
        for candidate in plan.candidates:
            target = components.candidate_targets.get(candidate.id)
            if target is None:
                target = build_candidate_target(
                    candidate,
                    self.config.target,
                    extra=self.config.extra,
                    retries=self.config.retries,
                )
                components.candidate_targets[candidate.id] = target
            lanes.append(_Lane(candidate.id, target, candidate))
        self.lanes = lanes

    def _write_state(self, status: RunStatus, finished: bool = False) -> None:
        now = self.clock()
        record = RunRecord(
            run_id=self.run_id,
            name=self.config.name,
            started_at=self.started_at,
            finished_at=now if finished else None,
            status=status,
            iterations=self.config.iterations,
            test_set=self.config.test_set,
            test_set_hash=self.test_set.sha256,
            config=self.config.model_dump_json(),
            judge=self.meta.get("judge", self.config.judge),
            embedder=self.meta.get("embedder", self.config.embedder),
            claim_threshold=self.meta.get("claim_threshold"),
            judge_prompt_version=self.meta.get("judge_prompt_version", ""),
            version=_version(),
            git_commit=self.meta.get("git"),
            host=socket.gethostname(),
            samples=len(self.cases),
            updated_at=now,
        )
        write_part(self.paths.lake, "runs", self.run_id, 0, [record])

    # ------------------------------------------------------------------ entry point
    def run(self) -> RunOutcome:
        self.run_id, self.config, self.started_at, resumed = self._resolve_run()
        try:
            try:
                components = self.components or build_components(self.config, self.paths)
            except InputError:
                raise
            except Exception as exc:
                raise RunError(f"cannot set up the run: {exc}") from exc
            try:
                self._prepare_lanes(components)
            except BaseException:
                if self.components is None:  # built here: release its HTTP clients
                    with contextlib.suppress(Exception):
                        asyncio.run(components.aclose())
                raise
            self.meta = {
                "judge": components.judge_name,
                "embedder": components.embedder_name,
                "git": _git_commit(),
                "claim_threshold": components.claim_threshold,
                "judge_prompt_version": components.judge_prompt_version,
            }
            sweep_orphans(self.paths.lake)
            verb = "resuming" if resumed else "starting"
            what = f"{len(self.cases)} samples"
            if self.plan is not None:
                named = [lane.candidate for lane in self.lanes if lane.candidate]
                if named:
                    what += f" x {len(named)} candidates ({', '.join(named)})"
                what += f", graders {', '.join(g.id for g in self.plan.graders)}"
            self.progress.message(f"{verb} run {self.run_id} ({what})")
            self._write_state("running")
            status: RunStatus = "interrupted"
            try:
                status = asyncio.run(self._main(components))
            except KeyboardInterrupt:
                status = "cancelled"
            finally:
                if status == "interrupted":
                    self._write_state("interrupted", finished=True)
            return self._finish(status)
        finally:
            if self.lock is not None:
                self.lock.release()

    def _finish(self, status: RunStatus) -> RunOutcome:
        results = read_table(self.paths.lake, "results", self.run_id)
        samples = results.num_rows
        errors = sum(1 for e in results.column("error").to_pylist() if e is not None)
        cost = float(sum(c or 0.0 for c in results.column("cost_usd").to_pylist()))
        fraction = errors / samples if samples else 0.0
        if status == "completed" and fraction > self.config.max_failed_fraction:
            status = "failed"
        self._write_state(status, finished=True)
        self._call_after_flush()
        exit_code = {"completed": EXIT_OK, "failed": EXIT_FAILED_SAMPLES}.get(
            status, EXIT_CANCELLED
        )
        self.progress.message(
            f"run {self.run_id} {status}: {samples} results, {errors} errors "
            f"({fraction:.1%}), ${cost:.4f}"
        )
        return RunOutcome(self.run_id, status, samples, errors, fraction, cost, exit_code)

    def _call_after_flush(self) -> None:
        if self.after_flush is None:
            return
        try:
            self.after_flush()
        except Exception as exc:  # ingest trouble never stops a run: the lake keeps it all
            self.progress.message(f"after-flush step failed (records stay in the lake): {exc}")

    # ------------------------------------------------------------------ async main
    def _install_signals(self, loop: asyncio.AbstractEventLoop) -> Callable[[], None]:
        installed: list[int] = []

        def on_signal() -> None:
            if self.stop.is_set():
                self.abandon.set()
                self.progress.message("stopping now: samples in flight are abandoned")
            else:
                self.stop.set()
                self.progress.message(
                    "stopping: finishing samples in flight (press Ctrl-C again to abandon them)"
                )

        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, on_signal)
                installed.append(sig)
            except (NotImplementedError, RuntimeError, ValueError):
                pass  # not the main thread: KeyboardInterrupt handling still applies

        def remove() -> None:
            for sig in installed:
                with contextlib.suppress(Exception):
                    loop.remove_signal_handler(sig)

        return remove

    async def _main(self, components: Components) -> RunStatus:
        loop = asyncio.get_running_loop()
        remove_signals = self._install_signals(loop)
        self.flush_lock = asyncio.Lock()
        batcher = _AnalyzerBatcher(components.analyzer)
        batcher.start()
        self.totals.total = len(self.cases) * len(self.lanes) * self.config.iterations
        try:
            for iteration in range(1, self.config.iterations + 1):
                if self.stop.is_set():
                    break
                await self._iteration(iteration, components, batcher)
                if self.stop.is_set():
                    break
                await asyncio.to_thread(self._close_iteration, iteration)
                self._call_after_flush()
        finally:
            await batcher.stop()
            await self._flush()
            await components.aclose()
            remove_signals()
        return "cancelled" if self.stop.is_set() else "completed"

    async def _iteration(
        self, iteration: int, components: Components, batcher: _AnalyzerBatcher
    ) -> None:
        units = len(self.cases) * len(self.lanes)
        if self._metrics_written(iteration):
            self.totals.done += units
            return
        done_rows = await asyncio.to_thread(self._done_rows, iteration)
        self.entries[iteration] = [_progress_entry(row) for row in done_rows.values()]
        # Case-major order: the candidates of one case are evaluated side by side, so a
        # cut-short run still compares them on the same cases.
        pending = [
            (case, lane)
            for case in self.cases
            for lane in self.lanes
            if _key(case.id, lane.candidate) not in done_rows
        ]
        self.totals.done += units - len(pending)
        self.totals.cost_usd += sum(float(r.get("cost_usd") or 0.0) for r in done_rows.values())
        if done_rows:
            self.progress.message(
                f"iteration {iteration}: {len(done_rows)} samples already in the lake, "
                f"{len(pending)} to go"
            )
        self._write_progress(iteration)
        queue: asyncio.Queue[tuple[TestCase, _Lane]] = asyncio.Queue()
        for unit in pending:
            queue.put_nowait(unit)

        async def worker() -> None:
            while not self.stop.is_set():
                try:
                    case, lane = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                output = await self._evaluate(case, lane, iteration, components, batcher)
                self.buffer.append(output)
                self.totals.done += 1
                self.totals.new_samples += 1
                self.totals.cost_usd += output.result.cost_usd
                self._report()
                if len(self.buffer) >= FLUSH_EVERY:
                    await self._flush()

        async def ticker() -> None:
            while True:
                await asyncio.sleep(0.25)
                if self.buffer and time.monotonic() - self.last_flush >= FLUSH_SECONDS:
                    await self._flush()

        workers = [
            asyncio.create_task(worker()) for _ in range(min(self.config.concurrency, len(pending)))
        ]
        tick = asyncio.create_task(ticker())
        try:
            await self._wait_workers(workers)
        finally:
            tick.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await tick
            await self._flush()

    async def _wait_workers(self, workers: list[asyncio.Task[None]]) -> None:
        grace = float(self.config.extra.get("cancel_grace_s", 30.0))
        stop_seen: float | None = None
        pending = set(workers)
        while pending:
            _, pending = await asyncio.wait(pending, timeout=0.2)
            if self.stop.is_set() and stop_seen is None:
                stop_seen = time.monotonic()
            overdue = stop_seen is not None and time.monotonic() - stop_seen > grace
            if pending and (self.abandon.is_set() or overdue):
                for task in pending:
                    task.cancel()
                await asyncio.gather(*pending, return_exceptions=True)
                break
        for task in workers:
            if task.done() and not task.cancelled() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]

    def _report(self) -> None:
        elapsed = max(time.monotonic() - self.totals.started, 1e-9)
        rate = self.totals.new_samples / elapsed
        left = self.totals.total - self.totals.done
        eta = left / rate if rate > 0 else None
        self.progress.update(self.totals.done, self.totals.total, self.totals.cost_usd, rate, eta)

    # ------------------------------------------------------------------ one sample
    async def _evaluate(
        self,
        case: TestCase,
        lane: _Lane,
        iteration: int,
        components: Components,
        batcher: _AnalyzerBatcher,
    ) -> _SampleOutput:
        key = SampleKey(
            run_id=self.run_id, iteration=iteration, sample_id=case.id, candidate=lane.candidate
        )
        errors: list[str] = []
        fields: dict[str, Any] = {}
        flags: list[str] = []
        children: dict[str, list[Any]] = {t: [] for t in CHILD_TABLES}
        reply: TargetResponse | None = None
        scored = case
        template_error = (
            self.plan.case_errors.get((lane.candidate, case.id)) if self.plan is not None else None
        )
        if template_error is not None:
            # Known before the run: the candidate's templates cannot render this case.
            errors.append(f"template: {template_error}")
        else:
            try:
                reply = await lane.target.respond(case)
            except TargetError as exc:
                errors.append(f"target: {exc}")
            except Exception as exc:
                errors.append(f"target: {type(exc).__name__}: {exc}")
        usage = Usage()
        scoring_started = time.perf_counter()
        if reply is not None:
            if reply.contexts is not None:
                scored = case.model_copy(update={"context": reply.contexts})
            analysis, outcome = await asyncio.gather(
                batcher.analyze(scored, reply.text),
                self._judge(scored, reply.text, components),
            )
            problem = _analysis_error(analysis)
            if problem is None:
                fields.update(analysis.result_fields())
                children["claims"].extend(analysis.claim_records(key))
                children["highlights"].extend(analysis.highlight_records(key))
                children["attributions"].extend(analysis.attribution_records(key))
            else:
                errors.append(f"analyzer: {problem}")
            if isinstance(outcome, str):
                errors.append(f"judge: {outcome}")
            else:
                judge_fields = outcome.result_fields()
                flags.extend(judge_fields.pop("flags", None) or [])
                fields.update(judge_fields)
                children["verdicts"].extend(outcome.verdict_records(key))
                usage = outcome.usage
                for warning in getattr(outcome, "warnings", ()) or ():
                    flags.append(f"judge_warning:{warning}"[:200])
        flags = list(fields.pop("flags", None) or []) + flags
        base: dict[str, Any] = {
            "run_id": self.run_id,
            "iteration": iteration,
            "sample_id": case.id,
            "domain": case.domain,
            "candidate": lane.candidate,
            "ai_provider": (
                lane.target.name if lane.candidate else case.ai_provider or lane.target.name
            ),
            "query": case.query,
            "response": reply.text if reply is not None else "",
            "tags": list(case.tags),
            "latency_ms": reply.latency_ms if reply is not None else None,
            "input_tokens": reply.input_tokens if reply is not None else None,
            "output_tokens": reply.output_tokens if reply is not None else None,
            "judge_input_tokens": usage.input_tokens,
            "judge_output_tokens": usage.output_tokens,
            "scoring_ms": (time.perf_counter() - scoring_started) * 1000.0,
            "cost_usd": (reply.cost_usd if reply is not None else 0.0) + usage.cost_usd,
            "sample_hash": case_hash(case),
            "scored_at": self.clock(),
        }
        known = set(ResultRecord.model_fields)
        merged = {**{k: v for k, v in fields.items() if k in known and k not in base}, **base}
        merged["flags"] = list(dict.fromkeys(str(f) for f in flags))
        merged["error"] = "; ".join(errors) if errors else None
        if lane.graded_as is not None:
            graded, grading = await self._grade(
                lane.graded_as, scored, reply, merged, iteration, components
            )
            children["grader_scores"] = graded
            # Rubric graders call the judge: their tokens and cost are the sample's too.
            for record in (merged, base):
                record["judge_input_tokens"] += grading.input_tokens
                record["judge_output_tokens"] += grading.output_tokens
                record["cost_usd"] += grading.cost_usd
                record["scoring_ms"] = (time.perf_counter() - scoring_started) * 1000.0
        try:
            result = ResultRecord.model_validate(merged)
        except ValidationError as exc:
            # A scorer produced a value the schema refuses: keep the sample as an error row.
            base["error"] = f"internal: result does not fit the schema: {exc.errors()[:2]}"
            base["flags"] = merged["flags"]
            result = ResultRecord.model_validate(base)
            children = {t: [] for t in CHILD_TABLES}
            if lane.graded_as is not None and self.plan is not None:
                children["grader_scores"] = failed_sample_rows(
                    self.plan, lane.graded_as, case, base["error"], run_id=self.run_id,
                    iteration=iteration,
                )  # fmt: skip
        return _SampleOutput(result, children)

    async def _grade(
        self,
        candidate: Candidate,
        case: TestCase,
        reply: TargetResponse | None,
        values: Mapping[str, Any],
        iteration: int,
        components: Components,
    ) -> tuple[list[Any], Usage]:
        """Grader rows of one sample (null scores when it produced no output) and what the
        graders spent; ``components.grade_timer`` gets the time it took."""
        assert self.plan is not None
        started = time.perf_counter()
        usage = Usage()
        if reply is None:
            why = str(values.get("error") or "the sample produced no output")
            rows = failed_sample_rows(
                self.plan, candidate, case, why, run_id=self.run_id, iteration=iteration
            )
        else:
            try:
                rows, usage = await grade_sample_with_usage(
                    self.plan,
                    candidate,
                    case,
                    reply.text,
                    run_id=self.run_id,
                    iteration=iteration,
                    values=values,
                )
            except Exception as exc:  # a grader bug must not stop the run
                rows = failed_sample_rows(
                    self.plan,
                    candidate,
                    case,
                    f"grading failed: {type(exc).__name__}: {exc}",
                    run_id=self.run_id,
                    iteration=iteration,
                )
        if components.grade_timer is not None:
            components.grade_timer(time.perf_counter() - started)
        return list(rows), usage

    async def _judge(
        self, case: TestCase, response: str, components: Components
    ) -> OutcomeLike | str:
        """The judge outcome, retried ``config.retries`` times on judge errors; else a reason."""
        last = ""
        for attempt in range(self.config.retries + 1):
            try:
                return await components.judge_sample(
                    case, response, components.judge, self.config.rag_weights
                )
            except JudgeError as exc:
                last = f"{type(exc).__name__}: {exc}"
            except Exception as exc:  # a bug in one sample must not stop the run
                return f"{type(exc).__name__}: {exc}"
            if attempt < self.config.retries:
                await asyncio.sleep(min(0.5 * 2**attempt, 8.0))
        return f"{last} (after {self.config.retries + 1} attempts)"

    # ------------------------------------------------------------------ lake I/O
    async def _flush(self) -> None:
        assert self.flush_lock is not None
        async with self.flush_lock:
            batch, self.buffer = self.buffer, []
            self.last_flush = time.monotonic()
            if batch:
                await asyncio.to_thread(self._write_batch, batch)

    def _write_batch(self, batch: list[_SampleOutput]) -> None:
        by_iteration: dict[int, list[_SampleOutput]] = {}
        for output in batch:
            by_iteration.setdefault(output.result.iteration, []).append(output)
        for iteration, outputs in sorted(by_iteration.items()):
            for table in CHILD_TABLES:
                rows = [row for o in outputs for row in o.children[table]]
                write_part(self.paths.lake, table, self.run_id, iteration, rows)
            # Last: the results part is what marks these samples done.
            write_part(
                self.paths.lake, "results", self.run_id, iteration, [o.result for o in outputs]
            )
            entries = self.entries.setdefault(iteration, [])
            entries.extend(_progress_entry(o.result.model_dump()) for o in outputs)
            self._write_progress(iteration)

    def _write_progress(self, iteration: int) -> None:
        write_progress_file(
            progress_file_path(self.paths.progress, self.run_id, iteration),
            test_set_name=self.test_set.name,
            iteration=iteration,
            total=len(self.cases) * max(1, len(self.lanes)),
            entries=self.entries.get(iteration, []),
        )

    def _metrics_written(self, iteration: int) -> bool:
        return any(
            p.run_id == self.run_id and p.iteration == iteration
            for p in list_parts(self.paths.lake, ["iteration_metrics"])
        )

    def _done_rows(self, iteration: int) -> dict[tuple[str, str], dict[str, Any]]:
        """Results already in the lake for this iteration by (sample_id, candidate); orphan
        child parts set aside."""
        table = read_table(self.paths.lake, "results", self.run_id, iteration)
        rows = {
            _key(row["sample_id"], row["candidate"]): row
            for row in table.select(
                ["sample_id", "candidate", "query", "scored_at", "cost_usd", "error",
                 "judge_faithfulness", "judge_completeness", "passed", "accuracy",
                 "completeness", "attribution"]
            ).to_pylist()
        }  # fmt: skip
        done = set(rows)
        for part in list_parts(self.paths.lake, list(CHILD_TABLES)):
            if part.run_id != self.run_id or part.iteration != iteration:
                continue
            keys = _part_keys(part.path)
            if keys is None or not keys <= done:
                # Written by a flush that died before its results part: the samples are redone,
                # so these rows would be duplicates. Dot-names are ignored by readers and ingest.
                part.path.rename(part.path.with_name(f".orphan-{part.path.name}"))
        return rows

    def _close_iteration(self, iteration: int) -> None:
        table = read_table(self.paths.lake, "results", self.run_id, iteration)
        rows = table.to_pylist()
        by_candidate: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            by_candidate.setdefault(row.get("candidate") or "", []).append(row)
        when = self.clock()
        records = [
            iteration_metrics(self.run_id, iteration, own, when, candidate=candidate)
            for candidate, own in sorted(by_candidate.items())
        ] or [iteration_metrics(self.run_id, iteration, [], when)]
        write_part(self.paths.lake, "iteration_metrics", self.run_id, iteration, records)
        self._write_progress(iteration)
        for record in records:
            who = f" candidate {record.candidate}:" if record.candidate else ""
            self.progress.message(
                f"iteration {iteration}:{who} {record.samples} samples, {record.errors} errors, "
                f"${record.cost_usd:.4f}"
            )


# ----------------------------------------------------------------------------- metrics


def _mean(values: Sequence[float | None]) -> float | None:
    xs = [float(v) for v in values if v is not None and not math.isnan(v)]
    return math.fsum(xs) / len(xs) if xs else None


def _reasoning_part(reasoning: str | None, label: str) -> str:
    """The line of ``judge_reasoning`` that starts with ``label`` (judge_sample's layout)."""
    for line in (reasoning or "").splitlines():
        if line.startswith(label):
            return line
    return reasoning or ""


def synthesis_outcomes(rows: Sequence[Mapping[str, Any]]) -> list[SynthesisOutcome]:
    """Result rows as the answer-synthesis module's per-sample outcomes."""
    return [
        SynthesisOutcome(
            sample_id=str(r["sample_id"]),
            question=str(r.get("query") or ""),
            faithfulness=r.get("judge_faithfulness"),
            completeness=r.get("judge_completeness"),
            faithfulness_reasoning=_reasoning_part(r.get("judge_reasoning"), "Faithfulness"),
            completeness_reasoning=_reasoning_part(r.get("judge_reasoning"), "Completeness"),
        )
        for r in rows
    ]


def iteration_metrics(
    run_id: str,
    iteration: int,
    rows: Sequence[Mapping[str, Any]],
    finished_at: datetime | None = None,
    *,
    candidate: str = "",
) -> IterationMetricsRecord:
    """The answer-synthesis metrics of one iteration (of one candidate) from its result
    rows."""

    def col(name: str) -> list[Any]:
        return [r.get(name) for r in rows]

    outcomes = synthesis_outcomes(rows)
    judged = synthesis_iteration_metrics(outcomes)
    return IterationMetricsRecord(
        run_id=run_id,
        iteration=iteration,
        candidate=candidate,
        samples=len(rows),
        errors=sum(1 for r in rows if r.get("error") is not None),
        accuracy_mean=_mean(col("accuracy")),
        completeness_mean=_mean(col("completeness")),
        attribution_mean=_mean(col("attribution")),
        judge_faithfulness_mean=judged["judge_faithfulness_mean"],
        judge_completeness_mean=judged["judge_completeness_mean"],
        faithfulness_pass_rate=judged["faithfulness_pass_rate"],
        completeness_pass_rate=judged["completeness_pass_rate"],
        pass_rate=judged["pass_rate"],
        claim_faithfulness_mean=_mean(col("claim_faithfulness")),
        rag_overall_mean=_mean(col("rag_overall")),
        input_tokens=sum(
            int(r.get("input_tokens") or 0) + int(r.get("judge_input_tokens") or 0) for r in rows
        ),
        output_tokens=sum(
            int(r.get("output_tokens") or 0) + int(r.get("judge_output_tokens") or 0) for r in rows
        ),
        cost_usd=float(math.fsum(float(r.get("cost_usd") or 0.0) for r in rows)),
        low_faithfulness=json.dumps(
            low_faithfulness_analysis(outcomes), ensure_ascii=False, default=str
        ),
        finished_at=finished_at or _utcnow(),
    )


# ----------------------------------------------------------------------------- public API


def run_evaluation(
    config: RunConfig,
    paths: Paths,
    *,
    test_set: LoadedTestSet,
    resume_run_id: str | None = None,
    after_flush: Callable[[], None] | None = None,
    progress: ProgressSink | None = None,
    only_sample_ids: set[str] | None = None,
    components: Components | None = None,
    clock: Callable[[], datetime] | None = None,
) -> RunOutcome:
    """Run (or resume) an evaluation and return how it ended.

    Resumes ``resume_run_id``, or else the latest unfinished run with the same name, test-set
    hash and config whose process is gone. ``after_flush`` (the CLI's ingest) is called after
    every iteration and at the end; its exceptions are reported through ``progress`` and
    never stop the run. Raises ``RunError`` for problems the user must fix (exit code 2).
    ``components`` replaces the parts built from the config (tests, benchmarks); ``clock``
    (naive UTC ``datetime``) dates the records, so the demo can backdate its weekly runs.

    ``config.extra`` may name ``candidates``, ``graders`` and the ``project`` folder
    (``CandidateRunSpec``); the project path is stored absolute, with a digest of its
    files, so a resume grades with the same files or refuses.
    """
    spec = CandidateRunSpec.from_extra(config.extra)
    if spec is not None:
        config = config.model_copy(update={"extra": {**config.extra, **spec.to_extra()}})
    runner = _Runner(
        config,
        paths,
        test_set,
        resume_run_id=resume_run_id,
        after_flush=after_flush,
        progress=progress,
        only_sample_ids=only_sample_ids,
        components=components,
        clock=clock,
    )
    return runner.run()


# ----------------------------------------------------------------------------- estimate

_CHARS_PER_TOKEN = 4
_PROMPT_OVERHEAD_TOKENS = 350  # instructions and JSON scaffolding of a judge prompt
_JUDGE_OUTPUT_TOKENS = 120
_TARGET_OUTPUT_TOKENS = 250
_LLM_SECONDS_PER_CALL = 1.5
_LOCAL_SAMPLES_PER_SECOND = 20.0


def _tokens(text: str) -> int:
    return max(1, len(text) // _CHARS_PER_TOKEN)


def _model_prices(spec: str) -> tuple[float, float]:
    if ":" not in spec:
        return (0.0, 0.0)
    model = spec.split(":", 1)[1]
    try:
        from engine.judges.pricing import PriceTable
    except ImportError:  # pragma: no cover - the pricing table ships with the judges
        return (0.0, 0.0)
    return PriceTable().prices(model) or (0.0, 0.0)


@dataclass(frozen=True)
class _EstimateLane:
    remote: bool
    prices: tuple[float, float]
    candidate: Candidate | None = None


def _estimate_lanes(config: RunConfig, candidates: Sequence[Candidate]) -> list[_EstimateLane]:
    if not candidates:
        remote = config.target != "recorded"
        tp = _model_prices(config.target) if config.target.startswith("openai:") else (0.0, 0.0)
        return [_EstimateLane(remote, tp)]
    lanes = []
    for candidate in candidates:
        prices = (0.0, 0.0)
        if candidate.runner == "llm_prompt":
            prices = _model_prices(f"openai:{candidate_model(candidate, config.target)}")
        lanes.append(_EstimateLane(True, prices, candidate))
    return lanes


def estimate_run(config: RunConfig, test_set: LoadedTestSet) -> Estimate:
    """Expected calls, tokens, cost and time of a run, without running it.

    LLM judge calls per sample, as ``engine.scoring.judging.judge_sample`` makes them: one
    claim extraction, one verification per response claim (estimated as the response's
    sentences, 5 when a target has yet to answer), one rubric, one relevance, one
    correctness when there is a reference answer, and one chunk-use call per context chunk
    (RAG precision). A local judge makes no API calls.
    With candidates (``--candidates``) every case is answered once per candidate (one target
    call each, none for a case the candidate's templates cannot render) and judged per
    answer; every ``llm-rubric`` grader adds one judge call per answer. Candidate and
    grader files are validated here too, so a broken file fails the estimate (exit 2).
    Tokens are estimated as characters / 4; time assumes 1.5 s per LLM call spread over
    the concurrency, and about 20 samples/s for local scoring.
    """
    n_iter = config.iterations
    remote_judge = config.judge != "local"
    spec = CandidateRunSpec.from_extra(config.extra)
    candidates, grader_specs = run_files(spec) if spec is not None else ([], [])
    rubrics = sum(1 for g in grader_specs if g.type == "llm-rubric")
    lanes = _estimate_lanes(config, candidates)
    skipped = template_errors(candidates, test_set.cases) if candidates else {}
    target_calls = judge_calls = tin = tout = 0
    cost = 0.0
    jp = _model_prices(config.judge)
    notes: list[str] = []
    for lane in lanes:
        remote_target = lane.remote
        tp = lane.prices
        for case in test_set.cases:
            context = "\n".join(case.effective_context)
            response = case.response if not remote_target and case.response else ""
            if lane.candidate is not None and (lane.candidate.id, case.id) in skipped:
                continue  # an error row, no call
            if remote_target:
                target_calls += 1
                t_in = _tokens(case.query) + _PROMPT_OVERHEAD_TOKENS
                if lane.candidate is not None:
                    t_in += _tokens(lane.candidate.system_prompt)
                tin += t_in
                tout += _TARGET_OUTPUT_TOKENS
                cost += (t_in * tp[0] + _TARGET_OUTPUT_TOKENS * tp[1]) / 1e6
            if remote_judge:
                claims = max(1, len(split_sentences(response))) if response else 5
                chunks = sum(1 for c in case.effective_context if c.strip())
                has_reference = bool(
                    case.expected_answer.text.strip() or case.expected_answer.claims
                )
                # judge_sample: extract claims, verify each, rubric, relevance, correctness
                # (with a reference), and one chunk-use call per context chunk (RAG
                # precision); then one call per llm-rubric grader.
                calls = 3 + claims + int(has_reference) + chunks + rubrics
                judge_calls += calls
                answer_tokens = _tokens(response) if response else _TARGET_OUTPUT_TOKENS
                per_call_in = _PROMPT_OVERHEAD_TOKENS + _tokens(case.query) + answer_tokens
                j_in = calls * per_call_in + (claims + 1 + rubrics) * _tokens(context or " ")
                tin += j_in
                tout += calls * _JUDGE_OUTPUT_TOKENS
                cost += (j_in * jp[0] + calls * _JUDGE_OUTPUT_TOKENS * jp[1]) / 1e6
    target_calls *= n_iter
    judge_calls *= n_iter
    tin *= n_iter
    tout *= n_iter
    cost *= n_iter
    samples = len(test_set.cases) * len(lanes) * n_iter
    seconds = samples / _LOCAL_SAMPLES_PER_SECOND
    remote_calls = target_calls + judge_calls
    seconds += remote_calls * _LLM_SECONDS_PER_CALL / max(1, config.concurrency)
    if candidates:
        notes.append(
            f"{len(candidates)} candidates x {len(test_set.cases)} cases"
            + (f"; {len(skipped)} answers skipped (template errors)" if skipped else "")
        )
    if grader_specs:
        notes.append(
            f"{len(grader_specs)} graders ({rubrics} llm-rubric: one judge call per answer each)"
        )
    if not remote_judge:
        notes.append("local judge: no judge API calls, no judge cost")
        if rubrics:
            notes.append("llm-rubric graders need --judge openai:MODEL (or another LLM judge)")
    if remote_judge and jp == (0.0, 0.0):
        notes.append(f"no price known for {config.judge}: judge cost counted as 0")
    if any(lane.remote and lane.prices == (0.0, 0.0) for lane in lanes if lane.candidate):
        notes.append("a candidate's model has no known price: its target cost counted as 0")
    if not candidates and config.target != "recorded" and config.target.startswith("http"):
        notes.append("http target: cost not known, counted as 0")
    missing = sum(1 for c in test_set.cases if c.response is None)
    if not candidates and config.target == "recorded" and missing:
        notes.append(f"{missing} cases have no recorded response and will be error rows")
    return Estimate(target_calls, judge_calls, tin, tout, cost, seconds, tuple(notes))


def iter_states(paths: Paths) -> Iterator[tuple[str, str]]:
    """(run_id, latest status) of every run in the lake, oldest first."""
    for run_id, state in sorted(_latest_run_states(paths.lake).items()):
        yield run_id, state.status
