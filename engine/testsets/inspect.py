"""What a test set can be scored on, case by case, before anything runs (``evalhouse inspect``).

Each metric of a case is either computed or null, and a null has one reason:

- no response: every metric waits for a target (``--target``) to generate one;
- accuracy needs a reference (expected answer, claims or ground truth); a case with only
  retrieved context is scored against that context; with neither, the sample errors;
- completeness needs expected claims, given or derived from the expected answer (as the
  run derives them, with the same function);
- attribution needs a brand name or a domain that is a host name (``attributable``);
- judge faithfulness and RAG metrics need context (retrieved, or the ground truth);
- tool-call metrics need ``expected_tools``; each case with tool calls lists them, and an
  agent case its recorded steps (model turns and tool executions, in order).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from engine.models import (
    ANALYZER_METRICS,
    AnalyzerConfig,
    ExpectedTool,
    TestCase,
    ToolCall,
    TrajectoryStep,
)
from engine.scoring.attribution import attributable
from engine.scoring.plan import expected_claims, has_reference
from engine.scoring.tools import in_order, shown
from engine.testsets.base import LoadedTestSet
from engine.testsets.conversations import case_conversation

METRICS = (*ANALYZER_METRICS, "faithfulness")


@dataclass(frozen=True)
class CaseCapabilities:
    """Which metrics one case gets, and why each missing one is null."""

    case_id: str
    domain: str
    scored: tuple[str, ...]
    null: dict[str, str]
    """Metric -> reason it will be null."""
    needs_target: bool
    notes: tuple[str, ...] = ()
    """Caveats of scored metrics (accuracy against context, say)."""


def case_capabilities(case: TestCase, config: AnalyzerConfig | None = None) -> CaseCapabilities:
    """The metrics ``case`` can get with the recorded response (or a target's), decided
    by the functions the run's analyzer plans with (``has_reference``, ``expected_claims``
    with the run's ``derive_claims``), so inspect never promises what the run does not do."""
    config = config or AnalyzerConfig()
    null: dict[str, str] = {}
    notes: list[str] = []
    given_truth = [c for c in case.ground_truth if not c.chunk_id.startswith("ctx#")]
    answer = bool(case.expected_answer.text.strip() or case.expected_answer.claims)
    if not has_reference(case):
        null["accuracy"] = (
            "no reference and no context: nothing to compare (error row)"
            if config.require_reference
            else "no reference and no context (flag no_reference)"
        )
    elif not answer and not given_truth:
        notes.append("accuracy: no reference, measured against the retrieved context")
    claims, source = expected_claims(case, config)
    if not claims:
        null["completeness"] = (
            "no expected claims and no expected answer to derive them from"
            if config.completeness.derive_claims
            else "no expected claims (derive_claims is off)"
        )
    elif source == "derived":
        notes.append(f"completeness: {len(claims)} claim(s) derived from the expected answer")
    if not attributable(case.domain, case.brand_names):
        null["attribution"] = f"no brand names and domain {case.domain!r} is not a host name"
    if not case.effective_context:
        null["faithfulness"] = "no context to check the response against"
    scored = tuple(m for m in METRICS if m not in null)
    return CaseCapabilities(case.id, case.domain, scored, null, case.response is None, tuple(notes))


def render_inspection(
    test_set: LoadedTestSet, *, limit: int = 20, config: AnalyzerConfig | None = None
) -> str:
    """The report ``evalhouse inspect`` prints: format, counts, mapping, per-case metrics
    (for the analyzer settings the run would use), skipped rows and missing files."""
    if test_set.format.startswith("conversations"):
        return _render_conversations(test_set, limit)
    caps = [case_capabilities(c, config) for c in test_set.cases]
    mapping = ", ".join(f"{k}={v}" for k, v in test_set.column_map.items()) or (
        f"{test_set.inferred} (read from the column names; --map overrides)"
        if test_set.inferred
        else "none"
    )
    domains = Counter(c.domain for c in caps)
    lines = [
        f"file:      {test_set.path}",
        f"format:    {test_set.format}",
        f"cases:     {len(caps)} ({len(test_set.problems)} rows skipped)",
        f"mapping:   {mapping}",
        f"domains:   {', '.join(f'{d} ({n})' for d, n in domains.most_common(5))}",
        *(
            [f"series:    {test_set.series} (named by the file; --series overrides)"]
            if test_set.series
            else []
        ),
        f"responses: {sum(not c.needs_target for c in caps)} recorded, "
        f"{sum(c.needs_target for c in caps)} need a target (--target)",
        f"tools:     {sum(bool(c.tools_called) for c in test_set.cases)} cases with tool "
        f"calls, {sum(c.expected_tools is not None for c in test_set.cases)} with expected "
        "tools (tool metrics)",
        f"steps:     {sum(bool(c.trajectory) for c in test_set.cases)} cases with a "
        f"trajectory, {sum(len(c.trajectory) for c in test_set.cases)} steps",
        "",
        "metric        scored  null  why null (most common)",
    ]
    for metric in METRICS:
        reasons = Counter(c.null[metric] for c in caps if metric in c.null)
        scored = sum(metric in c.scored for c in caps)
        why = reasons.most_common(1)[0][0] if reasons else ""
        lines.append(f"{metric:<13} {scored:>6}  {len(caps) - scored:>4}  {why}")
    lines += ["", f"cases (first {min(limit, len(caps))} of {len(caps)}):"]
    for cap in caps[:limit]:
        gets = ", ".join(cap.scored) or "nothing"
        nulls = "; ".join(f"{m}: {why}" for m, why in cap.null.items())
        target = " [needs a target]" if cap.needs_target else ""
        lines.append(f"  {cap.case_id} ({cap.domain}){target}: {gets}")
        if nulls:
            lines.append(f"      null -> {nulls}")
        lines += [f"      note -> {note}" for note in cap.notes]
    for case in test_set.cases[:limit]:
        lines += tool_lines(case)
        lines += trajectory_lines(case)
    if test_set.problems:
        lines += ["", "skipped rows and missing files:"]
        lines += [f"  {p}" for p in test_set.problems[:limit]]
        if len(test_set.problems) > limit:
            lines.append(f"  ... and {len(test_set.problems) - limit} more")
    return "\n".join(lines)


def _call_text(call: ToolCall | ExpectedTool) -> str:
    """``name(arg=value, ...)``; names and values as JSON where they are not plain, so a
    control character in the data cannot move the terminal's cursor."""
    name = call.name if call.name.isprintable() else shown(call.name)
    args = [f"{k if k.isprintable() else shown(k)}={shown(v)}" for k, v in call.arguments.items()]
    if isinstance(call, ExpectedTool):
        args += [f"{k}~{shown(s.get('type', 'schema'))}" for k, s in call.argument_schemas.items()]
    return f"{name}({', '.join(args)})"


def tool_lines(case: TestCase) -> list[str]:
    """The tool calls of a case and the calls expected of it, for ``inspect``."""
    if not case.tools_called and case.expected_tools is None:
        return []
    called = " -> ".join(_call_text(c) for c in in_order(case.tools_called)) or "none"
    lines = [f"  {case.id} tools called: {called}"]
    if case.expected_tools is not None:
        expected = ", ".join(_call_text(e) for e in case.expected_tools) or "none"
        order = " (in this order)" if case.expected_tools_ordered else ""
        lines.append(f"      expected{order}: {expected}")
    return lines


def _step_text(step: TrajectoryStep) -> str:
    """One step on one line: a model turn's name, the tools it asked for or what it said; a
    tool step's call and output; the duration when the trace has one."""
    if step.kind == "tool":
        call = _call_text(ToolCall(name=step.name, arguments=step.arguments))
        text = f"tool {call}" + ("" if step.output is None else f" -> {shown(step.output)}")
    else:
        name = step.name if step.name.isprintable() else shown(step.name)
        asked = ", ".join(_call_text(c) for c in step.requested)
        said = f"asked {asked}" if asked else shown(step.text) if step.text else "no text"
        text = f"model {name}: {said}" if name else f"model: {said}"
    return text if step.duration_ms is None else f"{text} ({step.duration_ms:,.0f} ms)"


def trajectory_lines(case: TestCase) -> list[str]:
    """The recorded steps of an agent case, in order, for ``inspect``."""
    if not case.trajectory:
        return []
    lines = [f"  {case.id} trajectory: {len(case.trajectory)} steps"]
    lines += [f"      {i}. {_step_text(step)}" for i, step in enumerate(case.trajectory, 1)]
    return lines


def _render_conversations(test_set: LoadedTestSet, limit: int) -> str:
    """A conversation file: its conversations, turns, recorded replies and expectations
    (what the conversation scorer grades), instead of the single-turn metrics."""
    convs = [c for case in test_set.cases if (c := case_conversation(case)) is not None]
    replies = [t for c in convs for t in c.turns if t.role == "assistant"]
    recorded = sum(1 for t in replies if t.content.strip())
    lines = [
        f"file:          {test_set.path}",
        f"format:        {test_set.format}",
        f"conversations: {len(convs)}, {sum(len(c.turns) for c in convs)} turns, "
        f"{len(replies)} assistant turns",
        f"replies:       {recorded} recorded (used with --target recorded), "
        f"{len(replies) - recorded} empty (need a target)",
        f"expectations:  {sum(1 for t in replies if t.expected.strip())} of {len(replies)} "
        "assistant turns",
        f"chatbot roles: {sum(1 for c in convs if c.chatbot_role.strip())} of {len(convs)} "
        "conversations (role adherence is null without one)",
        "",
        f"conversations (first {min(limit, len(convs))} of {len(convs)}):",
    ]
    for conv in convs[:limit]:
        shown = f" - {conv.scenario}" if conv.scenario else ""
        lines.append(f"  {conv.id}: {len(conv.turns)} turns{shown}")
    return "\n".join(lines)
