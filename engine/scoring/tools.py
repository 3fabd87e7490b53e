"""Tool-call metrics of one trajectory: the calls an agent made against the calls a correct
trajectory makes. Pure and deterministic (no embedder, no judge).

Conventions, chosen so that an empty side reads as "made no mistake of that kind" rather
than as a hole in the means:

- tool selection compares tool *names* as multisets: precision is matched calls / calls
  made (1.0 when nothing was called: no wrong call was made), recall is matched calls /
  expected calls (1.0 when nothing was expected), F1 their harmonic mean (0 when both are 0);
- each expected call is matched to one call of the same tool, a call whose arguments are
  right first; its arguments are right when every listed value is equal (JSON equality)
  and every schema'd argument is present and valid. Argument correctness is right expected
  calls / expected calls (null when nothing is expected; a missing call counts as wrong);
- order, only when the case says order matters: ``order_exact`` is 1 when the names called
  are exactly the names expected, in order; ``order_subsequence`` when the expected names
  appear in order among the calls (other calls in between allowed);
- redundant calls are the calls matched to no expected call (a second identical lookup, a
  tool that was not needed).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator

from engine.models import ExpectedTool, ToolCall

MAX_SHOWN = 60
"""Characters of a value shown in a reason before it is cut."""


@dataclass(frozen=True)
class CallCheck:
    """How one expected call was met."""

    expected: ExpectedTool
    position: int
    """Index of the expected call, from 0."""
    call: ToolCall | None
    """The call matched to it; None: the tool was never called (or every call of it went to
    earlier expected calls)."""
    problems: tuple[str, ...]
    """Why its arguments are wrong, one sentence each; empty when they are right."""

    @property
    def correct(self) -> bool:
        """Called, with the right arguments."""
        return self.call is not None and not self.problems


@dataclass(frozen=True)
class ToolMetrics:
    """The metrics of one trajectory (0-1 ratios, except ``redundant_calls``)."""

    precision: float
    recall: float
    f1: float
    argument_correctness: float | None
    order_exact: float | None
    order_subsequence: float | None
    redundant_calls: int
    checks: tuple[CallCheck, ...]
    called: tuple[ToolCall, ...]
    """The calls in trajectory order."""

    @property
    def tools_correct(self) -> bool:
        """Every expected call made with the right arguments, in order when it matters."""
        return all(c.correct for c in self.checks) and self.order_subsequence in (None, 1.0)


def in_order(calls: Sequence[ToolCall]) -> tuple[ToolCall, ...]:
    """Calls ordered by their ``order``, list position breaking ties and standing in for a
    missing one."""
    indexed = sorted(
        enumerate(calls),
        key=lambda pair: (pair[1].order if pair[1].order is not None else pair[0], pair[0]),
    )
    return tuple(call for _, call in indexed)


def shown(value: Any) -> str:
    """A JSON value as a short text for a reason."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


def argument_problems(expected: ExpectedTool, call: ToolCall) -> tuple[str, ...]:
    """Why ``call``'s arguments do not meet ``expected`` (empty: they do)."""
    problems = []
    for name, want in expected.arguments.items():
        if name not in call.arguments:
            problems.append(f"argument {name} missing (expected {shown(want)})")
        elif not _json_equal(call.arguments[name], want):
            got = call.arguments[name]
            problems.append(f"argument {name} is {shown(got)}, expected {shown(want)}")
    for name, schema in expected.argument_schemas.items():
        if name not in call.arguments:
            problems.append(f"argument {name} missing (a schema is expected)")
            continue
        error = next(iter(Draft202012Validator(schema).iter_errors(call.arguments[name])), None)
        if error is not None:
            problems.append(f"argument {name} = {shown(call.arguments[name])}: {error.message}")
    return tuple(problems)


def _json_equal(left: Any, right: Any) -> bool:
    # 1 and 1.0 are one JSON number; True is not the number 1.
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(_json_equal(left[k], right[k]) for k in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(_json_equal, left, right))
    if isinstance(left, int | float) and isinstance(right, int | float):
        return left == right
    return type(left) is type(right) and bool(left == right)


def match_calls(
    expected: Sequence[ExpectedTool], called: Sequence[ToolCall]
) -> tuple[CallCheck, ...]:
    """Each expected call with the call it is matched to: first every expected call takes
    the earliest free call of its tool with right arguments, then the ones left take the
    earliest free call of their tool (wrong arguments)."""
    taken: set[int] = set()
    chosen: dict[int, int] = {}
    for want_right in (True, False):
        for i, exp in enumerate(expected):
            if i in chosen:
                continue
            for j, call in enumerate(called):
                if j in taken or call.name != exp.name:
                    continue
                if want_right and argument_problems(exp, call):
                    continue
                chosen[i] = j
                taken.add(j)
                break
    checks = []
    for i, exp in enumerate(expected):
        match = called[chosen[i]] if i in chosen else None
        problems = argument_problems(exp, match) if match is not None else ()
        checks.append(CallCheck(exp, i, match, problems))
    return tuple(checks)


def is_subsequence(needle: Sequence[str], haystack: Sequence[str]) -> bool:
    """Whether ``needle`` appears in ``haystack`` in order (gaps allowed)."""
    rest = iter(haystack)
    return all(any(item == got for got in rest) for item in needle)


def tool_metrics(
    expected: Sequence[ExpectedTool], calls: Sequence[ToolCall], *, ordered: bool
) -> ToolMetrics:
    """The metrics of ``calls`` against ``expected`` (see the module docstring)."""
    called = in_order(calls)
    want = Counter(e.name for e in expected)
    got = Counter(c.name for c in called)
    matched = sum((want & got).values())
    precision = matched / len(called) if called else 1.0
    recall = matched / len(expected) if expected else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    checks = match_calls(expected, called)
    arguments = sum(c.correct for c in checks) / len(checks) if checks else None
    order_exact = order_subsequence = None
    if ordered and expected:
        names = [c.name for c in called]
        expected_names = [e.name for e in expected]
        order_exact = float(names == expected_names)
        order_subsequence = float(is_subsequence(expected_names, names))
    redundant = len(called) - sum(c.call is not None for c in checks)
    return ToolMetrics(
        precision=precision,
        recall=recall,
        f1=f1,
        argument_correctness=arguments,
        order_exact=order_exact,
        order_subsequence=order_subsequence,
        redundant_calls=redundant,
        checks=checks,
        called=called,
    )
