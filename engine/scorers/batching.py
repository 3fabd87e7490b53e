"""Batches of samples scored in a worker thread, so the event loop only schedules.

CPU-bound scorers (the analyzer, the local judge) queue their samples here. One task on
the event loop gathers the samples that are ready at the same moment (up to ``batch``)
and hands them to the scorer's synchronous batch function in a worker thread, where they
share one embedding pass. If a batch raises, each of its samples is scored alone, so one
bad sample never fails the others.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from engine.judges.local.offload import worker_scope

Item = TypeVar("Item")
Out = TypeVar("Out")

BatchFunction = Callable[[list[Item]], Sequence[Out | BaseException]]
"""Scores a batch in a worker thread: one outcome (or the exception of a sample that
could not be scored) per item, in order."""


class BatchWorker(Generic[Item, Out]):
    """Runs ``score_batch`` over batches of up to ``batch`` queued items, off the loop."""

    def __init__(self, score_batch: BatchFunction[Item, Out], batch: int) -> None:
        self._score_batch = score_batch
        self._batch = max(1, batch)
        self._queue: asyncio.Queue[tuple[Item, asyncio.Future[Out | BaseException]]] | None = None
        self._task: asyncio.Task[None] | None = None

    async def submit(self, item: Item) -> Out | BaseException:
        """Queue ``item`` for the next batch; its outcome, or the exception it raised."""
        if self._queue is None or self._task is None:
            self._queue = asyncio.Queue()
            self._task = asyncio.create_task(self._serve(self._queue))
        future: asyncio.Future[Out | BaseException] = asyncio.get_running_loop().create_future()
        await self._queue.put((item, future))
        return await future

    async def aclose(self) -> None:
        """Stop the batching task."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = self._queue = None

    async def _serve(
        self, queue: asyncio.Queue[tuple[Item, asyncio.Future[Out | BaseException]]]
    ) -> None:
        while True:
            items = [await queue.get()]
            await asyncio.sleep(0)  # let samples that are ready join this batch
            while len(items) < self._batch and not queue.empty():
                items.append(queue.get_nowait())
            live = [(item, future) for item, future in items if not future.done()]
            if live:
                results = await self._run([item for item, _ in live])
                for (_, future), result in zip(live, results, strict=True):
                    if not future.done():
                        future.set_result(result)

    def _in_worker(self, items: list[Item]) -> list[Out | BaseException]:
        with worker_scope():
            results = list(self._score_batch(items))
        if len(results) != len(items):
            raise RuntimeError(f"batch scorer returned {len(results)} results for {len(items)}")
        return results

    async def _run(self, items: list[Item]) -> list[Out | BaseException]:
        try:
            return await asyncio.to_thread(self._in_worker, items)
        except Exception:
            # Isolate the sample that broke the batch: the others still get scored.
            out: list[Out | BaseException] = []
            for item in items:
                try:
                    out.extend(await asyncio.to_thread(self._in_worker, [item]))
                except Exception as exc:
                    out.append(exc)
            return out
