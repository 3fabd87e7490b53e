"""Which ask of a judge a call is: the repeat index that makes a repeat a fresh call.

A run that asks its judge again (iterations > 1, ``judge_repeats`` > 1) must not be
answered from the cache by the first ask's reply, or every repeat is a replay and the
judge's variance reads as zero. The index travels in a context variable rather than
through every judge method: the sample pipeline sets the iteration's first index, the
judge scorer adds its repeat, and the HTTP client reads it into the cache key. A resumed
run sets the same indices again, so its repeats hit the cache and cost nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_ASK: ContextVar[int] = ContextVar("judge_ask", default=0)


def current_ask() -> int:
    """The index of the ask in progress (0: the first, whose cache key is the plain one)."""
    return _ASK.get()


def first_ask(iteration: int, repeats: int) -> int:
    """The index of the first ask of ``iteration`` (from 1) when each iteration asks
    ``repeats`` times: iteration 1 starts at 0, so a single run's keys stay the same."""
    return (max(1, iteration) - 1) * max(1, repeats)


@contextmanager
def asking(index: int) -> Iterator[None]:
    """Judge calls inside the block are ask ``index``."""
    token = _ASK.set(max(0, index))
    try:
        yield
    finally:
        _ASK.reset(token)
