"""What judge calls cost while a scorer is still working: the bill of a scorer that fails.

A scorer adds up the usage of its calls and hands the sum back with its outcome; a scorer
that raises half way hands back nothing, though the calls answered before the failure
were paid. The sample pipeline opens a meter around each scorer attempt and the HTTP
client records every paid call into the meters open in its context, so an error row
still carries the tokens and cost its answered calls spent. Like the ask index
(``engine.judges.asks``) the meter travels in a context variable rather than through
every judge method; tasks a scorer starts inherit it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from engine.judges.base import Usage


@dataclass
class Meter:
    """The usage of the paid calls made while the meter was open."""

    usage: Usage = field(default_factory=Usage)


_METERS: ContextVar[tuple[Meter, ...]] = ContextVar("judge_meters", default=())


def record(usage: Usage) -> Usage:
    """Add a paid call's ``usage`` to every open meter; returns ``usage`` for chaining."""
    for meter in _METERS.get():
        meter.usage = meter.usage + usage
    return usage


@contextmanager
def metering() -> Iterator[Meter]:
    """A meter of the paid calls made inside the block (meters nest: each sees its own)."""
    meter = Meter()
    token = _METERS.set((*_METERS.get(), meter))
    try:
        yield meter
    finally:
        _METERS.reset(token)
