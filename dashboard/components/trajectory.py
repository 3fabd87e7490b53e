"""An agent's trajectory on the Sample page: its steps in order (model turns, tool calls with
arguments, outputs and durations), the expected call beside each tool call, and every
mismatch named in words and in colour (a colour alone says nothing to a colour-blind reader
or a printout): right, wrong argument, wrong tool, extra call, missing call.

The matching is the tool metrics' own (``engine.scoring.tools``), so the page and the
``tool_scores`` numbers never disagree. Tool names, arguments, outputs and model text are
data: every piece passes through ``esc`` and nothing is rendered as Markdown.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from dashboard.components.highlighter import esc
from engine.models import ExpectedTool, ToolCall, TrajectoryStep
from engine.scoring.tools import ToolMetrics, tool_metrics

MAX_SHOWN = 240
"""Characters of an argument list, output or model text shown in a cell (the whole value
is in the cell's tooltip)."""


@dataclass(frozen=True)
class Mark:
    """A verdict as shown: its word, its colour, and why."""

    word: str
    color: str
    detail: str = ""


RIGHT = ("right", "#1a7f37")
WRONG_ARGUMENT = ("wrong argument", "#9a6700")
WRONG_TOOL = ("wrong tool", "#cf222e")
MISSING = ("missing call", "#cf222e")
EXTRA = ("extra call", "#bc4c00")
NOT_CHECKED = ("not checked", "#57606a")
"""A call of a case without expected tools: nothing to compare it with."""


@dataclass(frozen=True)
class Row:
    """One line of the trajectory table."""

    step: str
    """What kind of step, and its tool or model (``tool lookup_order``)."""
    happened: tuple[str, ...]
    """What the agent did, one line each: a model's text and requested calls, a tool's
    arguments and output (plain text, escaped when drawn)."""
    expected: str
    """The expected call beside it ('' when none)."""
    mark: Mark | None
    timing: str = ""


@dataclass(frozen=True)
class TrajectoryView:
    """The rows of the table and a one-line summary."""

    rows: tuple[Row, ...]
    summary: str


def call_text(name: str, arguments: Mapping[str, Any]) -> str:
    """``name(a=1, b="x")``: a call as a person writes it."""
    args = ", ".join(f"{k}={_json(v)}" for k, v in arguments.items())
    return f"{name}({args})"


def _expected_text(expected: ExpectedTool) -> str:
    shown: dict[str, Any] = dict(expected.arguments)
    shown.update({k: _schema_text(s) for k, s in expected.argument_schemas.items()})
    return call_text(expected.name, shown)


def _schema_text(schema: Mapping[str, Any]) -> str:
    """What a schema'd argument must be, in a few words: ``<one of a, b>``, ``<string>``."""
    if isinstance(schema.get("enum"), list):
        return "<one of " + ", ".join(_json(v) for v in schema["enum"]) + ">"
    if isinstance(schema.get("type"), str):
        return f"<{schema['type']}>"
    return "<as its schema says>"


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _duration(ms: float | None) -> str:
    if ms is None:
        return ""
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.2f} s"


def _parse(case: Mapping[str, Any]) -> tuple[
    tuple[ToolCall, ...], tuple[ExpectedTool, ...] | None, tuple[TrajectoryStep, ...]
]:  # fmt: skip
    calls = tuple(ToolCall.model_validate(c) for c in case.get("tools_called") or ())
    raw = case.get("expected_tools")
    expected = None if raw is None else tuple(ExpectedTool.model_validate(e) for e in raw)
    steps = tuple(TrajectoryStep.model_validate(s) for s in case.get("trajectory") or ())
    return calls, expected, steps


def _marks(
    metrics: ToolMetrics, names: set[str]
) -> tuple[dict[int, tuple[Mark, str]], list[tuple[str, Mark]]]:
    """Each call's mark and expected call (by position among the calls, in order), and the
    expected calls no call met (as their text and mark)."""
    position = {id(call): j for j, call in enumerate(metrics.called)}
    marks: dict[int, tuple[Mark, str]] = {}
    missing = []
    for check in metrics.checks:
        text = _expected_text(check.expected)
        if check.call is None:
            missing.append((check, text))
        elif check.problems:
            mark = Mark(*WRONG_ARGUMENT, "; ".join(check.problems))
            marks[position[id(check.call)]] = (mark, text)
        else:
            marks[position[id(check.call)]] = (Mark(*RIGHT), text)
    free = [j for j in range(len(metrics.called)) if j not in marks]
    unmet: list[tuple[str, Mark]] = []
    for check, text in missing:
        # A call of a tool nobody expected, where an expected call is missing: the agent
        # picked the wrong tool (one mistake, not an extra call and a missing one).
        j = next((j for j in free if metrics.called[j].name not in names), None)
        if j is None:
            unmet.append((text, Mark(*MISSING, "never called")))
            continue
        free.remove(j)
        why = f"called {metrics.called[j].name} where {check.expected.name} was expected"
        marks[j] = (Mark(*WRONG_TOOL, why), text)
    for j in free:
        marks[j] = (Mark(*EXTRA, "no expected call is left for it"), "")
    return marks, unmet


def _cut(text: str) -> str:
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


def trajectory_view(case: Mapping[str, Any]) -> TrajectoryView | None:
    """The table of a case (native format, decoded), or None when it has no tool calls,
    no expected calls and no recorded steps (or they no longer validate)."""
    try:
        calls, expected, steps = _parse(case)
    except (ValidationError, TypeError, ValueError):
        return None
    if not calls and expected is None and not steps:
        return None
    ordered = bool(case.get("expected_tools_ordered"))
    metrics = tool_metrics(expected or (), calls, ordered=ordered)
    names = {e.name for e in expected or ()}
    marks, unmet = _marks(metrics, names) if expected is not None else ({}, [])
    if not steps:  # a written case: its calls are its steps
        steps = tuple(
            TrajectoryStep(kind="tool", name=c.name, arguments=c.arguments, output=c.output)
            for c in metrics.called
        )
    rows: list[Row] = []
    used: set[int] = set()
    for step in steps:
        timing = _duration(step.duration_ms)
        if step.kind == "model":
            asks = "; ".join(call_text(c.name, c.arguments) for c in step.requested)
            said = " ".join(step.text.split())
            parts = [f"says: {said}" if said else "", f"asks for: {asks}" if asks else ""]
            happened = tuple(p for p in parts if p) or ("(no text)",)
            rows.append(Row(f"model {step.name}".strip(), happened, "", None, timing))
            continue
        j = next(
            (j for j, c in enumerate(metrics.called)
             if j not in used and c.name == step.name and c.arguments == step.arguments),
            None,
        )  # fmt: skip
        if j is not None:
            used.add(j)
        mark, want = marks.get(j, (Mark(*NOT_CHECKED), "")) if j is not None else (None, "")
        happened = ("arguments: " + _json(step.arguments),)
        if step.output is not None:
            happened += ("output: " + _json(step.output),)
        rows.append(Row(f"tool {step.name}", happened, want, mark, timing))
    for j, call in enumerate(metrics.called):  # asked for, never run
        if j not in used:
            mark, want = marks.get(j, (Mark(*NOT_CHECKED), ""))
            rows.append(Row(f"tool {call.name} (not run)", ("arguments: " + _json(call.arguments),),
                            want, mark))  # fmt: skip
    rows += [Row("(not called)", (), text, mark) for text, mark in unmet]
    return TrajectoryView(tuple(rows), _summary(rows, metrics, expected, ordered))


def _summary(
    rows: Sequence[Row], metrics: ToolMetrics, expected: Sequence[ExpectedTool] | None,
    ordered: bool,
) -> str:  # fmt: skip
    made = len(metrics.called)
    if expected is None:
        return f"{_count(made, 'tool call')}; the case lists no expected calls to compare with."
    counts: dict[str, int] = {}
    for row in rows:
        if row.mark is not None:
            counts[row.mark.word] = counts.get(row.mark.word, 0) + 1
    found = ", ".join(_count(n, word) for word, n in counts.items()) or "nothing to compare"
    line = f"{_count(made, 'tool call')} against {len(expected)} expected: {found}."
    if ordered and metrics.order_subsequence == 0.0:
        line += " The expected calls are out of order."
    return line


def _count(n: int, word: str) -> str:
    """``1 extra call``, ``2 extra calls``, ``2 right``."""
    plural = n != 1 and word.endswith(("call", "tool", "argument"))
    return f"{n} {word}{'s' if plural else ''}"


_CELL = "padding:6px 8px;border-bottom:1px solid #d0d7de;vertical-align:top;"


def _pill(mark: Mark | None) -> str:
    if mark is None:
        return ""
    pill = (f'<span style="display:inline-block;padding:1px 8px;border-radius:10px;'
            f'color:#fff;background:{mark.color};font-weight:600;font-size:12.5px">'
            f"{esc(mark.word)}</span>")  # fmt: skip
    if mark.detail:
        pill += f'<div style="color:{mark.color};font-size:12px;margin-top:2px">'
        pill += f"{esc(_cut(mark.detail))}</div>"
    return pill


_WRAP = "overflow-wrap:break-word;"
"""Long values wrap at spaces and punctuation first, inside a word only when they must."""
_MONO = "font-family:ui-monospace,monospace;font-size:12.5px;"


def _breakable(escaped: str) -> str:
    """Escaped text with a line-break chance after the first ``(`` and after each ``_``
    before it: a call wraps before its arguments (``lookup_order(`` / ``order_id=12345)``)
    or between the words of its name, never inside an argument's name or a number."""
    name, paren, rest = escaped.partition("(")
    if not paren:  # a JSON value, not a call: its keys stay whole
        return escaped
    return name.replace("_", "_<wbr>") + "(<wbr>" + rest


def _lines(lines: Sequence[str], mono: bool = True) -> str:
    """A cell of one or more lines; a cut line keeps its whole text in the tooltip."""
    style = _CELL + _WRAP + (_MONO if mono else "")
    shown = "<br>".join(_breakable(esc(_cut(line))) for line in lines)
    whole = "\n".join(lines)
    title = f' title="{esc(whole)}"' if any(len(line) > MAX_SHOWN for line in lines) else ""
    return f'<td style="{style}"{title}>{shown}</td>'


def _step(n: int, row: Row) -> str:
    kind, _, name = row.step.partition(" ")
    label = {"model": "Model turn", "tool": "Tool call"}.get(kind, row.step)
    html = f'<div style="font-weight:600">{n} · {esc(label)}</div>'
    if label != row.step:
        html += f'<div style="{_MONO}{_WRAP}">{esc(name).replace("_", "_<wbr>")}</div>'
    if row.timing:
        html += f'<div style="color:#57606a;font-size:12px">{esc(row.timing)}</div>'
    colour = f"border-left:4px solid {row.mark.color};" if row.mark else ""
    return f'<td style="{_CELL}{_WRAP}{colour}">{html}</td>'


COLUMNS = (("Step", "19%"), ("What the agent did", "33%"), ("Expected call", "27%"),
           ("Check", "21%"))  # fmt: skip
"""Headers and widths: at 1024 px an expected call keeps its arguments on one line or two,
and the Check column holds "wrong argument" (its pill wraps rather than spill)."""


def trajectory_html(view: TrajectoryView) -> str:
    """The table as HTML; every string from data escaped."""
    head = "".join(
        f'<th style="{_CELL}text-align:left;width:{w}">{esc(h)}</th>' for h, w in COLUMNS
    )
    body = []
    for n, row in enumerate(view.rows, start=1):
        body.append(
            f"<tr>{_step(n, row)}"
            f"{_lines(row.happened, mono=not row.step.startswith('model'))}"
            f"{_lines([row.expected] if row.expected else [])}"
            f'<td style="{_CELL}{_WRAP}">{_pill(row.mark)}</td></tr>'
        )
    return (
        f'<p style="margin:0 0 6px 0">{esc(view.summary)}</p>'
        '<table style="width:100%;table-layout:fixed;border-collapse:collapse;font-size:14px">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


RECORDED_NOTE = (
    "This is the recorded agent's trajectory: the response above was generated anew by the "
    "run's target or candidate, which reports no tool calls."
)
"""Said when the scored response is not the case's recorded one (a target or candidate
lane): the steps shown are not what produced it."""


def show_trajectory(case: Mapping[str, Any] | None, response: str | None = None) -> None:
    """The Trajectory section of the Sample page (nothing when the case has no tool calls,
    expected calls or steps); ``response`` is the scored one, to say when the trajectory is
    not its own."""
    import streamlit as st

    view = trajectory_view(case) if case is not None else None
    if view is None or case is None:
        return
    st.subheader("Trajectory")
    recorded = case.get("response")
    if recorded is not None and response is not None and response != recorded:
        st.caption(RECORDED_NOTE)  # fixed text: nothing from data
    st.html(trajectory_html(view))
