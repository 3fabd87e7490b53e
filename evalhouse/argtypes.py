"""Argparse types that refuse a bad number in one line naming the flag."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


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
