"""Which tests are slow, measured: ``tests/slow.txt`` lists the tests that ``pytest
--durations=0`` measured above ``THRESHOLD_S`` (setup, call and teardown together), and
the root conftest marks them ``slow``, so ``make check`` leaves them to ``make test``.

Regenerate after tests change (each line keeps the seconds it was measured at)::

    pytest -n auto -m "not slow and not browser" --durations=0 > durations.log
    python -m tests.slow_tests durations.log          # adds the newly slow ones

Tests marked ``slow`` in their own file (processes killed on purpose, Ray, repeated runs)
need no line here.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

LIST = Path(__file__).with_name("slow.txt")
THRESHOLD_S = 0.8
"""Above this (measured on the project's shared 2-core machine) a test waits for make test."""

_LINE = re.compile(r"^([0-9.]+)s (?:call|setup|teardown)\s+(\S+)")


def listed() -> set[str]:
    """The node ids of ``slow.txt``."""
    if not LIST.exists():
        return set()
    lines = LIST.read_text(encoding="utf-8").splitlines()
    return {ln.split("#", 1)[0].strip() for ln in lines if ln.split("#", 1)[0].strip()}


_SECONDS = re.compile(r"#\s*([0-9.]+)\s*s\b")


def listed_seconds() -> dict[str, float]:
    """The node ids of ``slow.txt`` with the seconds each was measured at."""
    if not LIST.exists():
        return {}
    seconds: dict[str, float] = {}
    for line in LIST.read_text(encoding="utf-8").splitlines():
        node, _, comment = line.partition("#")
        match = _SECONDS.search("#" + comment)
        if node.strip() and match:
            seconds[node.strip()] = float(match.group(1))
    return seconds


def measured(log: Path) -> dict[str, float]:
    """Seconds per test of a ``--durations=0`` report."""
    seconds: dict[str, float] = defaultdict(float)
    for line in log.read_text(encoding="utf-8").splitlines():
        match = _LINE.match(line)
        if match:
            seconds[match.group(2)] += float(match.group(1))
    return seconds


def main(log: Path) -> None:
    """Add the tests of ``log`` above the threshold to ``slow.txt`` (kept sorted)."""
    lines = LIST.read_text(encoding="utf-8").splitlines() if LIST.exists() else []
    known = listed()
    for node, seconds in measured(log).items():
        if seconds > THRESHOLD_S and node not in known:
            lines.append(f"{node}  # {seconds:.1f} s")
    header = [ln for ln in lines if ln.startswith("#")]
    body = sorted(ln for ln in lines if ln.strip() and not ln.startswith("#"))
    LIST.write_text("\n".join(header + body) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
