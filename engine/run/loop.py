"""The run loop: identity and lock, run states, iterations, flushes, signals.

One run = N iterations over lanes x cases. An executor (``engine.run.executors``: local
workers, or Ray shards) scores the (case, lane) units an iteration still lacks through the
``SamplePipeline`` and publishes them (``LakeWriter``) at least every ``FLUSH_EVERY``
samples or ``FLUSH_SECONDS`` seconds, so a kill -9 loses at most the samples in flight and
the unflushed buffer, which a resume redoes. Run states go to the ``runs`` table: running,
then completed / failed (too many error rows) / cancelled (Ctrl-C, SIGTERM) / interrupted
(an unexpected exception).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from engine.candidates.plan import CandidatePlan, lineage_records, plan_for_run, project_digest
from engine.clock import utcnow
from engine.errors import InputError
from engine.lake import partition_dir, read_table, sweep_orphans, write_part
from engine.models import RunConfig, RunRecord, RunStatus, TestCase
from engine.progress import NullProgress, ProgressSink
from engine.run.components import Components, build_components, build_scorers
from engine.run.control import POLL_S, pause_requested, request_continue
from engine.run.conversing import TurnJournal
from engine.run.executors import Executor, LocalWorkers, Scope
from engine.run.identity import RunError, RunIdentity, evalhouse_version, git_commit
from engine.run.lanes import Lane, build_lanes
from engine.run.metrics import METRIC_COLUMNS, ci_width, iteration_means, metrics_by_candidate
from engine.run.pipeline import SamplePipeline
from engine.run.pool import start_pool
from engine.run.testset_version import write_testset_version
from engine.run.warmth import scores_in_process
from engine.run.writer import LakeWriter
from engine.scorers.analyzer import ANALYZE_BATCH
from engine.scorers.base import sample_kind
from engine.scorers.batching import PoolUnavailable
from engine.scorers.judge import pooled_judge
from engine.secrets import redact
from engine.settings import Paths
from engine.testsets import LoadedTestSet, case_records
from engine.testsets.versions import cases_hash

FLUSH_EVERY = 50
"""Flush the buffer once it holds this many samples..."""
FLUSH_SECONDS = 5.0
"""...or this many seconds after the previous flush, whichever comes first."""
EXIT_OK, EXIT_FAILED_SAMPLES, EXIT_CANCELLED = 0, 1, 130


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


@dataclass
class _Totals:
    done: int = 0
    total: int = 0
    cost_usd: float = 0.0
    new_samples: int = 0
    started: float = field(default_factory=time.monotonic)


class Runner:
    """Runs (or resumes) one run; ``run_evaluation`` is the way in."""

    def __init__(
        self,
        config: RunConfig,
        paths: Paths,
        test_set: LoadedTestSet,
        cases: tuple[TestCase, ...],
        *,
        progress: ProgressSink | None = None,
        after_flush: Callable[[], None] | None = None,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.config = config
        self.paths = paths
        self.test_set = test_set
        self.cases = cases
        self._cases_hash = cases_hash(test_set.cases) if test_set.cases else ""
        self.progress: ProgressSink = progress or NullProgress()
        self.after_flush = after_flush
        self.clock = clock
        self.stop = threading.Event()  # set by Ctrl-C / SIGTERM
        self.abandon = threading.Event()  # second Ctrl-C: cancel what is in flight
        self.paused = threading.Event()  # a control file asks the run to pause
        self.totals = _Totals()
        self.meta: dict[str, Any] = {}
        self.run_id = ""
        self.started_at = clock()
        self.lanes: list[Lane] = []
        self.writer: LakeWriter | None = None
        self.executor: Executor | None = None
        """Who scores the samples: local workers, or Ray with ``executor: ray``."""

    # ------------------------------------------------------------------ entry point
    def run(
        self,
        identity: RunIdentity,
        components: Components | None,
    ) -> RunOutcome:
        """Run the identified run to its end; releases its lock."""
        self.run_id, self.config = identity.run_id, identity.config
        self.started_at = identity.started_at
        try:
            built = components is None
            parts = components or self._build()
            try:
                pipeline = self._prepare(parts)
                self.executor = self._executor(pipeline, parts)
            except BaseException:
                if built:  # built here: release its HTTP clients
                    with contextlib.suppress(Exception):
                        asyncio.run(parts.aclose())
                raise
            if identity.note:
                self.progress.message(identity.note)
            self._announce(identity.resumed, parts)
            self._write_state("running")
            self._write_cases()
            self._write_lineage(parts.plan)
            status: RunStatus = "interrupted"
            try:
                status = asyncio.run(self._main(parts, pipeline))
            except KeyboardInterrupt:
                status = "cancelled"
            finally:
                if status == "interrupted":
                    self._write_state("interrupted", finished=True)
            return self._finish(status)
        finally:
            if self.executor is not None:
                self.executor.close()
            identity.lock.release()

    def _executor(self, pipeline: SamplePipeline, parts: Components) -> Executor:
        if self.config.executor == "ray":
            from engine.run.distributed import RayShards  # Ray only when asked

            return RayShards.start(self.config.ray_address)
        return LocalWorkers(pipeline, in_flight=self._in_flight(parts))

    def _in_flight(self, parts: Components) -> int:
        """Samples the local workers keep in flight: ``concurrency``, or, with worker
        processes and nothing remote to call (recorded answers, the local judge), enough
        to fill a batch in every worker. With ``judge_mode: batch`` every sample of an
        iteration is in flight at once, so each round of judge prompts is one batch (the
        judge's own semaphore still bounds its live calls)."""
        config = self.config
        if config.judge_mode == "batch":
            return max(config.concurrency, len(self.cases) * max(1, len(self.lanes)))
        if parts.pool is None:
            return config.concurrency
        remote = config.target != "recorded" or config.candidates is not None
        if remote or config.judge != "local" or not pooled_judge(config):
            return config.concurrency
        return max(config.concurrency, parts.pool.workers * ANALYZE_BATCH)

    def _build(self) -> Components:
        try:
            parts = build_components(self.config, self.paths, self.run_id)
        except InputError:
            raise
        except Exception as exc:
            raise RunError(f"cannot set up the run: {exc}") from exc
        lanes = len(self.config.candidates) if self.config.candidates else 1
        samples = len(self.cases) * lanes * self.config.iterations
        pool = None
        cases = sample_kind(self.test_set.format) == "cases"  # conversations: no batch scorers
        if cases and not scores_in_process(self.cases, self.config, parts.embedder, samples):
            try:
                pool = start_pool(self.config, self.paths, samples, warn=self.progress.message)
            except PoolUnavailable as exc:
                self.progress.message(f"scoring in this process: {exc}")
        if pool is not None:
            parts.pool = pool
            parts.closers.append(pool.aclose)
        return parts

    def _prepare(self, parts: Components) -> SamplePipeline:
        """Plan, lanes and scorers, checked before any call."""
        plan = self._plan(parts)
        parts.plan = plan
        self.lanes = build_lanes(self.config, parts, plan, TurnJournal(self.paths.progress))
        self.writer = LakeWriter(
            self.paths, self.run_id, self.test_set.name, len(self.cases) * len(self.lanes)
        )
        self.meta = {
            "judge": parts.judge_name,
            "embedder": parts.embedder_name,
            "git": git_commit(),
            "claim_threshold": parts.claim_threshold,
            "judge_prompt_version": parts.judge_prompt_version,
            "graders": [g.id for g in plan.graders] if plan is not None else [],
        }
        pipeline = SamplePipeline(
            build_scorers(self.config, parts, sample_kind(self.test_set.format)),
            run_id=self.run_id,
            retries=self.config.retries,
            clock=self.clock,
            max_scored_chars=self.config.max_scored_chars,
            judge_repeats=self.config.judge_repeats,
        )
        sweep_orphans(self.paths.lake)
        return pipeline

    def _plan(self, parts: Components) -> CandidatePlan | None:
        if parts.plan is not None:
            return parts.plan
        stored, project = self.config.project_digest, self.config.project
        if stored and project and stored != project_digest(Path(project)):
            raise RunError(
                f"the candidate or grader files of {project} changed since run "
                f"{self.run_id} started; restore them or start a new run (another --name)"
            )
        return plan_for_run(
            self.config,
            self.cases,
            embedder=parts.embedder,
            judge=parts.judge,
            judges=parts.grader_judges,
        )

    def _announce(self, resumed: bool, parts: Components) -> None:
        verb = "resuming" if resumed else "starting"
        what = f"{len(self.cases)} samples"
        named = [lane.candidate for lane in self.lanes if lane.candidate]
        if named:
            what += f" x {len(named)} candidates ({', '.join(named)})"
        if self.meta["graders"]:
            what += f", graders {', '.join(self.meta['graders'])}"
        self.progress.message(f"{verb} run {self.run_id} ({what})")

    def _write_cases(self) -> None:
        """The cases the run scores, once per run (a resumed run has them already)."""
        write_testset_version(self.paths.lake, self.run_id, self.test_set)
        if any(partition_dir(self.paths.lake, "cases", self.run_id, 0).glob("part-*.parquet")):
            return
        write_part(self.paths.lake, "cases", self.run_id, 0, case_records(self.run_id, self.cases))

    def _write_lineage(self, plan: CandidatePlan | None) -> None:
        """Each candidate's parent and edit, once per run (a resumed run has them)."""
        records = lineage_records(self.run_id, plan)
        table = "candidate_lineage"
        if not records or any(
            partition_dir(self.paths.lake, table, self.run_id, 0).glob("part-*.parquet")
        ):
            return
        write_part(self.paths.lake, table, self.run_id, 0, records)

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
            test_set_name=self.test_set.name,
            test_set_cases_hash=self._cases_hash,
            series=self.config.series,
            config=redact(self.config.model_dump_json()),
            judge=self.meta.get("judge", self.config.judge),
            judge_temperature=(
                None
                if all(j == "local" for j in self.config.judges)
                else self.config.effective_judge_temperature
            ),
            embedder=self.meta.get("embedder", self.config.embedder),
            claim_threshold=self.meta.get("claim_threshold"),
            judge_prompt_version=self.meta.get("judge_prompt_version", ""),
            version=evalhouse_version(),
            git_commit=self.meta.get("git"),
            host=socket.gethostname(),
            samples=len(self.cases),
            updated_at=now,
        )
        write_part(self.paths.lake, "runs", self.run_id, 0, [record])

    def _finish(self, status: RunStatus) -> RunOutcome:
        results = read_table(self.paths.lake, "results", self.run_id, columns=("error", "cost_usd"))
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

        def on_signal(sig: int) -> None:
            if self.stop.is_set():
                self.abandon.set()
                self.progress.message("stopping now: samples in flight are abandoned")
                return
            self.stop.set()
            # SIGTERM comes from a supervisor (the dashboard's Cancel, a CI timeout), whose
            # reader has no keyboard to press Ctrl-C on.
            again = "press Ctrl-C again" if sig == signal.SIGINT else "stop it again"
            self.progress.message(
                f"stopping: finishing samples in flight ({again} to abandon them)"
            )

        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, on_signal, sig)
                installed.append(sig)
            except (NotImplementedError, RuntimeError, ValueError):
                pass  # not the main thread: KeyboardInterrupt handling still applies

        def remove() -> None:
            for sig in installed:
                with contextlib.suppress(Exception):
                    loop.remove_signal_handler(sig)

        return remove

    async def _main(self, parts: Components, pipeline: SamplePipeline) -> RunStatus:
        remove_signals = self._install_signals(asyncio.get_running_loop())
        self.totals.total = len(self.cases) * len(self.lanes) * self.config.iterations
        watcher = asyncio.create_task(self._watch_pause())
        try:
            for iteration in range(1, self.config.iterations + 1):
                if self.stop.is_set():
                    break
                await self._iteration(iteration)
                if self.stop.is_set():
                    break
                await asyncio.to_thread(self._close_iteration, iteration)
                self._call_after_flush()
                if self.config.until_ci is not None and await asyncio.to_thread(
                    self._interval_reached, iteration
                ):
                    break
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
            request_continue(self.paths, self.run_id)  # a resumed run starts unpaused
            for scorer in pipeline.scorers:
                with contextlib.suppress(Exception):
                    await scorer.aclose()
            await parts.aclose()
            remove_signals()
        return "cancelled" if self.stop.is_set() else "completed"

    async def _watch_pause(self) -> None:
        """Follow the run's control file: pause (in-flight samples finish, nothing new
        starts, the state reads ``paused``) and go on, as often as it is asked."""
        while True:
            await asyncio.sleep(POLL_S)
            wanted = await asyncio.to_thread(pause_requested, self.paths, self.run_id)
            if wanted == self.paused.is_set():
                continue
            if wanted:
                self.paused.set()
                self.progress.message(
                    f"paused: samples in flight finish, nothing new starts "
                    f"(evalhouse continue {self.run_id})"
                )
            else:
                self.paused.clear()
                self.progress.message("continuing")
            await asyncio.to_thread(self._write_state, "paused" if wanted else "running")

    async def _iteration(self, iteration: int) -> None:
        assert self.writer is not None and self.executor is not None
        units = len(self.cases) * len(self.lanes)
        if self.writer.metrics_written(iteration):
            self.totals.done += units
            return
        done_rows = await asyncio.to_thread(self.writer.done_rows, iteration)
        # Case-major order: the candidates of one case are evaluated side by side, so a
        # cut-short run still compares them on the same cases.
        pending = [
            (case, lane)
            for case in self.cases
            for lane in self.lanes
            if (case.id, lane.candidate) not in done_rows
        ]
        self.totals.done += units - len(pending)
        self.totals.cost_usd += sum(float(r.get("cost_usd") or 0.0) for r in done_rows.values())
        if done_rows:
            self.progress.message(
                f"iteration {iteration}: {len(done_rows)} samples already in the lake, "
                f"{len(pending)} to go"
            )
        self.writer.write_progress(iteration)
        await self.executor.score(self._scope(self.writer), iteration, pending)

    def _scope(self, writer: LakeWriter) -> Scope:
        # The flush limits are read here, at call time: tests shrink them.
        return Scope(
            config=self.config,
            paths=self.paths,
            run_id=self.run_id,
            writer=writer,
            stop=self.stop,
            abandon=self.abandon,
            paused=self.paused,
            progress=self.progress,
            counted=self._counted,
            flush_every=FLUSH_EVERY,
            flush_seconds=FLUSH_SECONDS,
        )

    def _counted(self, samples: int, cost_usd: float) -> None:
        self.totals.done += samples
        self.totals.new_samples += samples
        self.totals.cost_usd += cost_usd
        self._report()

    def _report(self) -> None:
        elapsed = max(time.monotonic() - self.totals.started, 1e-9)
        rate = self.totals.new_samples / elapsed
        left = self.totals.total - self.totals.done
        eta = left / rate if rate > 0 else None
        self.progress.update(self.totals.done, self.totals.total, self.totals.cost_usd, rate, eta)

    # ------------------------------------------------------------------ lake I/O
    def _interval_reached(self, iteration: int) -> bool:
        """``--until-ci``: whether every lane's 95% interval of the metric's mean over
        the iterations so far is narrow enough (said on the progress line either way)."""
        rule = self.config.until_ci
        assert rule is not None
        wanted = ("candidate", "iteration", rule.metric)
        rows = read_table(self.paths.lake, "results", self.run_id, columns=wanted).to_pylist()
        means = iteration_means(rows, rule.metric)
        widths = {c: ci_width([m for i, m in sorted(per.items()) if i <= iteration])
                  for c, per in means.items()}  # fmt: skip
        shown = ", ".join(
            f"{c or 'run'} {'n/a' if w is None else f'{w:.3g}'}" for c, w in widths.items()
        )
        reached = bool(widths) and all(w is not None and w <= rule.width for w in widths.values())
        if iteration < self.config.iterations or reached:
            verdict = "stopping" if reached else "going on"
            self.progress.message(
                f"iteration {iteration}: 95% interval of mean {rule.metric}: {shown or 'no values'}"
                f" (asked {rule.width:g}); {verdict}"
            )
        return reached and iteration < self.config.iterations

    def _close_iteration(self, iteration: int) -> None:
        assert self.writer is not None
        rows = read_table(
            self.paths.lake, "results", self.run_id, iteration, columns=METRIC_COLUMNS
        ).to_pylist()
        records = metrics_by_candidate(self.run_id, iteration, rows, self.clock())
        write_part(self.paths.lake, "iteration_metrics", self.run_id, iteration, records)
        self.writer.write_progress(iteration)
        for record in records:
            who = f" candidate {record.candidate}:" if record.candidate else ""
            self.progress.message(
                f"iteration {iteration}:{who} {record.samples} samples, {record.errors} errors, "
                f"${record.cost_usd:.4f}"
            )
