"""The argparse pieces every command shares: the parser (one-line refusals, flags added
when first needed) and types that refuse a bad number in one line naming the flag."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from engine.errors import printable
from evalhouse.console import EXIT_USAGE


class Parser(argparse.ArgumentParser):
    """argparse with one-line refusals: ``evalhouse run: error: ...`` and the hint, instead
    of the usage block (a script's log keeps one line per refusal).

    A command may add its flags only when it is parsed or its help is shown
    (``defer``): ``run`` derives its flags from ``RunConfig``, and importing the models
    just to print ``--version`` or run ``sql`` would cost every command that time."""

    _deferred: list[Callable[[argparse.ArgumentParser], None]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deferred = []

    def defer(self, add: Callable[[argparse.ArgumentParser], None]) -> None:
        """Call ``add(self)`` before this parser is first used."""
        self._deferred.append(add)

    def complete(self) -> Parser:
        """Add every deferred flag now; returns the parser."""
        while self._deferred:
            self._deferred.pop(0)(self)
        return self

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        self.complete()
        return super().parse_known_args(args, namespace)

    def format_help(self) -> str:
        self.complete()
        return super().format_help()

    def format_usage(self) -> str:
        self.complete()
        return super().format_usage()

    def error(self, message: str) -> NoReturn:
        self.exit(
            EXIT_USAGE, printable(f"{self.prog}: error: {message} (see {self.prog} --help)") + "\n"
        )


def count(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer of at least ``minimum``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{text!r} must be at least {minimum}")
        return value

    return parse


def seconds(text: str) -> float:
    """An argparse type: a positive, finite number of seconds (0, negative or nan would
    switch a time limit off)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a positive number of seconds")
    return value


def dollars(text: str) -> float:
    """An argparse type: a finite amount of US dollars, 0 or more (nan would compare false
    with every estimate and let a budget through, or stop every pass, unnoticed)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an amount of dollars") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a finite amount of 0 or more")
    return value


def points(text: str) -> float:
    """An argparse type: a tolerance in score points, 0..100."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 <= value <= 100.0:  # also false for nan
        raise argparse.ArgumentTypeError(f"{text!r} must lie in 0..100")
    return value


def port(text: str) -> int:
    """An argparse type: a TCP port, 1..65535."""
    value = count(1)(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a TCP port (1..65535)")
    return value


_DURATION_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
MAX_DURATION_S = 3650 * 86400.0
"""Longest duration a flag takes (ten years): beyond it a schedule's sleep overflows the
system clock's range, and no snapshot or schedule needs more."""


def duration(text: str) -> float:
    """An argparse type: a duration as ``90s``, ``15m``, ``1h``, ``7d`` (or plain seconds),
    zero allowed; returns seconds."""
    raw = text.strip().lower()
    unit = _DURATION_UNITS.get(raw[-1:]) if raw else None
    number = raw[:-1] if unit is not None else raw
    try:
        value = float(number) * (unit or 1.0)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a duration (write 90s, 15m, 1h or 7d)"
        ) from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a duration of 0 or more")
    if value > MAX_DURATION_S:
        raise argparse.ArgumentTypeError(f"{text!r}: at most 3650d (ten years)")
    return value
