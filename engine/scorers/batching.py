"""Batches of samples scored off the event loop: in a worker thread, or in worker processes.

CPU-bound scorers (the analyzer, the local judge) queue their samples here. A task on the
event loop gathers the samples that are ready at the same moment (up to ``batch``) and
hands them to the scorer's synchronous batch function, where they share one embedding
pass. If a batch raises, each of its samples is scored alone, so one bad sample never
fails the others.

Without a pool the batch runs in a thread of this process: one core's worth of Python.
With a ``BatchPool`` (``engine.run.pool``: one worker process per lane, each with its own
model) every lane has its own queue and one batch in flight, so ``workers`` batches run at
once. A sample keeps one lane for all the scorers that use the pool (``BatchPool.lane``):
its analyzer and its judge then read each vector from the same worker's memory instead of
embedding it twice.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Generic, Protocol, TypeVar

from engine.judges.local.offload import worker_scope

Item = TypeVar("Item")
Out = TypeVar("Out")

BatchFunction = Callable[[list[Item]], Sequence[Out | BaseException]]
"""Scores a batch in a worker thread: one outcome (or the exception of a sample that
could not be scored) per item, in order."""


class PoolUnavailable(RuntimeError):
    """The pool's workers cannot score (they will not start, or died too often): the
    batch runs in this process instead."""


class BatchPool(Protocol):
    """Worker processes that score batches of a named kind (``engine.run.pool``)."""

    @property
    def workers(self) -> int:
        """Lanes: worker processes, each scoring one batch at a time."""
        ...

    def lane(self, sample: Hashable) -> int:
        """The lane of ``sample``: the same for every scorer that asks about it."""
        ...

    async def run(self, kind: str, lane: int, items: list[Any]) -> list[Any]:
        """``kind``'s batch function over ``items`` in ``lane``'s worker process; raises
        ``PoolUnavailable`` when no worker can score."""
        ...


class BatchWorker(Generic[Item, Out]):
    """Runs ``score_batch`` over batches of up to ``batch`` queued items, off the loop:
    in a thread, or (given ``pool``) in the pool's worker processes as batch kind
    ``kind``, where ``sample_of`` names the sample an item belongs to."""

    def __init__(
        self,
        score_batch: BatchFunction[Item, Out],
        batch: int,
        *,
        pool: BatchPool | None = None,
        kind: str = "",
        sample_of: Callable[[Item], Hashable] | None = None,
    ) -> None:
        if pool is not None and (not kind or sample_of is None):
            raise ValueError("a pooled batch worker needs its kind and sample_of")
        self._score_batch = score_batch
        self._batch = max(1, batch)
        self._pool = pool
        self._kind = kind
        self._sample_of = sample_of
        lanes = pool.workers if pool is not None else 1
        self._queues: list[asyncio.Queue[tuple[Item, asyncio.Future[Out | BaseException]]]]
        self._queues = []
        self._tasks: list[asyncio.Task[None]] = []
        self._lanes = lanes

    async def submit(self, item: Item) -> Out | BaseException:
        """Queue ``item`` for the next batch; its outcome, or the exception it raised."""
        if not self._tasks:
            self._queues = [asyncio.Queue() for _ in range(self._lanes)]
            self._tasks = [
                asyncio.create_task(self._serve(lane, queue))
                for lane, queue in enumerate(self._queues)
            ]
        lane = 0
        if self._pool is not None and self._sample_of is not None:
            lane = self._pool.lane(self._sample_of(item))
        future: asyncio.Future[Out | BaseException] = asyncio.get_running_loop().create_future()
        await self._queues[lane].put((item, future))
        return await future

    async def aclose(self) -> None:
        """Stop the batching tasks."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks, self._queues = [], []

    async def _serve(
        self, lane: int, queue: asyncio.Queue[tuple[Item, asyncio.Future[Out | BaseException]]]
    ) -> None:
        while True:
            items = [await queue.get()]
            await asyncio.sleep(0)  # let samples that are ready join this batch
            while len(items) < self._batch and not queue.empty():
                items.append(queue.get_nowait())
            live = [(item, future) for item, future in items if not future.done()]
            if live:
                results = await self._run(lane, [item for item, _ in live])
                for (_, future), result in zip(live, results, strict=True):
                    if not future.done():
                        future.set_result(result)

    def _in_worker(self, items: list[Item]) -> list[Out | BaseException]:
        with worker_scope():
            results = list(self._score_batch(items))
        if len(results) != len(items):
            raise RuntimeError(f"batch scorer returned {len(results)} results for {len(items)}")
        return results

    async def _once(self, lane: int, items: list[Item]) -> list[Out | BaseException]:
        if self._pool is None:
            return await asyncio.to_thread(self._in_worker, items)
        try:
            results: list[Out | BaseException] = await self._pool.run(self._kind, lane, items)
        except PoolUnavailable:
            self._pool = None
            return await asyncio.to_thread(self._in_worker, items)
        if len(results) != len(items):
            raise RuntimeError(f"batch scorer returned {len(results)} results for {len(items)}")
        return results

    async def _run(self, lane: int, items: list[Item]) -> list[Out | BaseException]:
        try:
            return await self._once(lane, items)
        except Exception:
            # Isolate the sample that broke the batch (or killed its worker process): the
            # others still get scored, each once.
            out: list[Out | BaseException] = []
            for item in items:
                try:
                    out.extend(await self._once(lane, [item]))
                except Exception as exc:
                    out.append(exc)
            return out
