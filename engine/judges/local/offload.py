"""Keeping CPU-bound judging off the event loop.

The local judge computes (embeddings, rules) and never waits on I/O, yet it speaks the
async ``Judge`` protocol. Run on the event loop, each of its calls would stall every
request in flight. So its async methods hand the work to a thread, unless they already
run in a scoring worker: the judge scorer judges batches of samples in a worker thread
(inside ``worker_scope``), where hopping to yet another thread would only cost time.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

_state = threading.local()


def on_worker() -> bool:
    """Whether this thread is a scoring worker (inside ``worker_scope``)."""
    return bool(getattr(_state, "depth", 0))


@contextmanager
def worker_scope() -> Iterator[None]:
    """Mark this thread as a scoring worker while the block runs."""
    _state.depth = getattr(_state, "depth", 0) + 1
    try:
        yield
    finally:
        _state.depth -= 1


async def off_loop(fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """``fn(*args, **kwargs)``: right here on a scoring worker, else in a thread, so the
    event loop never runs it."""
    if on_worker():
        return fn(*args, **kwargs)
    return await asyncio.to_thread(fn, *args, **kwargs)
