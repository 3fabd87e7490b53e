"""Executors: who scores an iteration's pending samples.

The run loop (``engine.run.loop``) keeps the run record and its lock, iterations, progress,
signals and resume; an executor only scores the samples an iteration still lacks and
publishes them to the lake. Two implement ``Executor``: ``LocalWorkers`` here (asyncio
workers of this process, a buffer flushed every ``flush_every`` samples or
``flush_seconds`` seconds) and ``RayShards`` (``engine.run.distributed``: Ray tasks, each
publishing a shard). Both see the run through a ``Scope``, never the loop's internals, so
the loop builds on the executors and not the other way round.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from engine.models import RunConfig, TestCase
from engine.progress import ProgressSink
from engine.run.lanes import Lane
from engine.run.pipeline import SamplePipeline
from engine.run.writer import LakeWriter, SampleOutput
from engine.settings import Paths

Pending = Sequence[tuple[TestCase, Lane]]
"""An iteration's samples still to score: (case, lane) pairs, case-major."""


@dataclass(frozen=True)
class Scope:
    """What an executor sees of the run it scores for."""

    config: RunConfig
    paths: Paths
    run_id: str
    writer: LakeWriter
    """The run's lake writer: commit protocol, done set and progress file."""
    stop: threading.Event
    """Set by Ctrl-C / SIGTERM: start nothing new, finish what is in flight."""
    abandon: threading.Event
    """Set by a second Ctrl-C: cancel what is in flight."""
    paused: threading.Event
    """Set while the run is paused (``engine.run.control``): start nothing new."""
    progress: ProgressSink
    counted: Callable[[int, float], None]
    """Called with (samples newly scored, their cost in USD) as they finish."""
    flush_every: int
    """At most this many samples wait unpublished (a kill loses at most these)."""
    flush_seconds: float
    """...and at most this long."""

    def holding(self) -> bool:
        """Whether new samples must wait: the run is stopping or paused."""
        return self.stop.is_set() or self.paused.is_set()


PAUSE_POLL_S = 0.2
"""How often an executor holding new samples for a pause looks again."""


class Executor(Protocol):
    """Scores an iteration's pending samples and publishes them to the lake."""

    async def score(self, scope: Scope, iteration: int, pending: Pending) -> None:
        """Return when every pending sample is published, or when the run is stopped."""
        ...

    def close(self) -> None:
        """Release what the executor holds (a Ray connection); called once per run."""
        ...


class LocalWorkers:
    """``in_flight`` asyncio workers of this process (at least the run's ``concurrency``)
    sending samples through the run's pipeline; outputs are buffered and flushed by count
    or time."""

    def __init__(self, pipeline: SamplePipeline, *, in_flight: int = 1) -> None:
        self.pipeline = pipeline
        self.in_flight = in_flight
        self.buffer: list[SampleOutput] = []
        self.last_flush = time.monotonic()
        self._flush_lock: asyncio.Lock | None = None

    async def score(self, scope: Scope, iteration: int, pending: Pending) -> None:
        """Score ``pending`` with up to ``in_flight`` workers; flush what they return."""
        self._flush_lock = asyncio.Lock()
        queue: asyncio.Queue[tuple[TestCase, Lane]] = asyncio.Queue()
        for unit in pending:
            queue.put_nowait(unit)

        async def worker() -> None:
            while not scope.stop.is_set():
                if scope.paused.is_set():  # what is in flight finishes; nothing new starts
                    await asyncio.sleep(PAUSE_POLL_S)
                    continue
                try:
                    case, lane = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                output = await self.pipeline.evaluate(case, lane, iteration)
                self.buffer.append(output)
                scope.counted(1, output.result.cost_usd)
                if len(self.buffer) >= scope.flush_every:
                    await self._flush(scope.writer)

        done_ticking = asyncio.Event()

        async def ticker() -> None:
            # Stopped by an event, never cancelled: a cancelled flush could drop its batch.
            while not done_ticking.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(done_ticking.wait(), 0.25)
                if self.buffer and time.monotonic() - self.last_flush >= scope.flush_seconds:
                    await self._flush(scope.writer)

        workers = [
            asyncio.create_task(worker())
            for _ in range(min(max(scope.config.concurrency, self.in_flight), len(pending)))
        ]
        tick = asyncio.create_task(ticker())
        try:
            await _wait_workers(scope, workers)
        finally:
            done_ticking.set()
            await tick  # lets a flush in progress finish, and raises its error
            await self._flush(scope.writer)

    async def _flush(self, writer: LakeWriter) -> None:
        assert self._flush_lock is not None
        async with self._flush_lock:
            batch, self.buffer = self.buffer, []
            self.last_flush = time.monotonic()
            if not batch:
                return
            # Shielded: cancelling a queued executor job would drop the batch silently
            # (found with two runs in one home: the thread pool was busy with analyzer
            # batches when an iteration ended). A cancelled flush waits for its write.
            write = asyncio.get_running_loop().run_in_executor(None, writer.write, batch)
            try:
                await asyncio.shield(write)
            except asyncio.CancelledError:
                await asyncio.wait([write])
                raise

    def close(self) -> None:
        """Nothing to release: the pipeline's scorers are closed by the run loop."""


async def _wait_workers(scope: Scope, workers: list[asyncio.Task[None]]) -> None:
    stop_seen: float | None = None
    pending = set(workers)
    while pending:
        _, pending = await asyncio.wait(pending, timeout=0.2)
        if scope.stop.is_set() and stop_seen is None:
            stop_seen = time.monotonic()
        overdue = (
            stop_seen is not None and time.monotonic() - stop_seen > scope.config.cancel_grace_s
        )
        if pending and (scope.abandon.is_set() or overdue):
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            break
    for task in workers:
        if task.done() and not task.cancelled():
            error = task.exception()
            if error is not None:
                raise error
