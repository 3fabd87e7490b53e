"""Lanes: where a run's responses come from. A run is lanes x cases x iterations.

A plain run has one lane, its target (recorded responses, a model or an HTTP endpoint),
written as candidate ``""``; a run with ``--candidates`` has one lane per candidate, each
with the target its file describes. Nothing else differs between them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from engine.candidates.plan import CandidatePlan
from engine.models import RunConfig, SampleKey, TestCase
from engine.run.components import Components
from engine.run.conversing import TurnJournal, converse
from engine.targets import Target, TargetResponse
from engine.targets.candidate import build_candidate_target
from engine.testsets.conversations import case_conversation


@dataclass(frozen=True)
class Lane:
    """One producer of responses."""

    candidate: str
    """Candidate id written on the records ("" for the run's own target)."""
    target: Target
    """What answers the cases."""
    case_errors: Mapping[str, str] = field(default_factory=dict)
    """case id -> why this lane cannot answer it (a template it cannot render)."""
    journal: TurnJournal | None = None
    """Where the replies of unfinished conversations are kept (resume per turn)."""

    async def respond(self, case: TestCase, key: SampleKey) -> TargetResponse:
        """The target's answer to a case; a conversation is answered turn by turn with
        its history (``engine.run.conversing``)."""
        conv = case_conversation(case)
        if conv is None:
            return await self.target.respond(case)
        return await converse(case, conv, self.target, self.journal, key)

    def provider(self, case: TestCase) -> str:
        """``results.ai_provider``: the recorded provider of the case, else the target."""
        if self.candidate:
            return self.target.name
        return case.ai_provider or self.target.name


def build_lanes(
    config: RunConfig,
    components: Components,
    plan: CandidatePlan | None,
    journal: TurnJournal | None = None,
) -> list[Lane]:
    """The run's lanes: its target, or one per candidate of the plan (targets built from
    the candidate files, before any call). Raises TargetConfigError for a candidate whose
    target cannot be built."""
    if plan is None or not plan.candidates:
        return [Lane("", components.target, journal=journal)]
    lanes: list[Lane] = []
    for candidate in plan.candidates:
        target = components.candidate_targets.get(candidate.id)
        if target is None:
            target = build_candidate_target(
                candidate,
                config.target,
                options=config.target_options,
                retries=config.retries,
                concurrency=config.concurrency,
            )
            components.candidate_targets[candidate.id] = target
        errors = {case: why for (who, case), why in plan.case_errors.items() if who == candidate.id}
        lanes.append(Lane(candidate.id, target, errors, journal))
    return lanes
