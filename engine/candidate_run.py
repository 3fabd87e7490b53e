"""Several candidates on one test set: the plan checked up front, grader rows per sample.

This module is the part of a multi-candidate run that does not depend on how responses
are produced or how samples are scheduled (that is the runner's job):

* ``plan_candidate_run`` loads the candidates and graders of a project folder and checks
  everything that can be checked before any call: malformed files, unknown grader ids
  (asked for or recommended), graders that cannot be bound (no embedder, a rubric given
  to the local judge), and which cases a candidate's templates cannot render (those
  become error rows of that case only);
* ``grade_sample`` runs every grader on one candidate's output for one case and returns
  ``GraderScoreRecord`` rows; a grader that fails gives a row with a null score;
* ``write_grader_scores`` appends rows to the lake table ``grader_scores``.

Weights (the write-up's "Weighted Scoring"): a candidate that declares
``recommended_graders`` weighs them as declared and every other grader 0 (the write-up's
loop runs over the declared weights only); a candidate that declares none uses each
grader file's ``weight`` (1 by default). The weight is written on every row, so the
warehouse view ``candidate_scores`` needs nothing else.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from engine.candidates import Candidate, CaseTemplateError, load_candidates
from engine.embedders.base import Embedder
from engine.graders import (
    GradeInput,
    Grader,
    GraderConfigError,
    GraderError,
    load_graders,
)
from engine.lake import write_part
from engine.models import GraderScoreRecord, TestCase


@dataclass(frozen=True)
class CandidatePlan:
    """What a multi-candidate run will do, checked before anything is called."""

    candidates: tuple[Candidate, ...]
    """The candidates, in the order asked."""
    graders: tuple[Grader, ...]
    """The bound graders every candidate is graded with."""
    weights: Mapping[str, Mapping[str, float]]
    """candidate id -> grader id -> weight in that candidate's weighted score."""
    case_errors: Mapping[tuple[str, str], str] = field(default_factory=dict)
    """(candidate id, case id) -> why the candidate's templates cannot render that case."""

    @property
    def needs_values(self) -> frozenset[str]:
        """``ResultRecord`` fields the runner must compute for the built-in graders."""
        out: set[str] = set()
        for grader in self.graders:
            out |= grader.needs_values
        return frozenset(out)

    def weight(self, candidate: str, grader: str) -> float:
        """The weight of ``grader`` in ``candidate``'s weighted score."""
        return self.weights[candidate][grader]


def candidate_weights(candidate: Candidate, graders: Sequence[Grader]) -> dict[str, float]:
    """Grader id -> weight for one candidate (declared weights, else the graders' own)."""
    declared = candidate.grader_weights()
    if declared:
        return {g.id: declared.get(g.id, 0.0) for g in graders}
    return {g.id: g.weight for g in graders}


def plan_candidate_run(
    project: Path,
    candidate_ids: list[str] | None,
    grader_names: list[str] | None,
    cases: Sequence[TestCase],
    *,
    embedder: Embedder | None = None,
    judge: object | None = None,
) -> CandidatePlan:
    """Load and check the candidates and graders of ``project`` for ``cases``.

    ``project`` holds ``candidates/`` and ``graders/``. With ``grader_names`` None the
    graders are those the chosen candidates recommend (in order of first mention), or
    every grader file when none recommends any. Raises CandidateFileError,
    GraderFileError or GraderConfigError; nothing has been called when it does.
    """
    candidates = load_candidates(project / "candidates", candidate_ids)
    if not candidates:
        raise GraderConfigError(f"no candidates in {project / 'candidates'}")
    names = grader_names
    if names is None:
        recommended = [g.grader for c in candidates for g in c.recommended_graders]
        names = list(dict.fromkeys(recommended)) or None
    graders = load_graders(project / "graders", names, embedder=embedder, judge=judge)
    if not graders:
        raise GraderConfigError(
            f"no graders: {project / 'graders'} has no grader files and none was named"
        )
    case_errors: dict[tuple[str, str], str] = {}
    for candidate in candidates:
        for case in cases:
            try:
                if candidate.runner == "llm_prompt":
                    candidate.render_system(case)
                    candidate.render_user(case)
                else:
                    candidate.render_url(case)
                    if candidate.endpoint is not None and candidate.endpoint.method == "POST":
                        candidate.render_body(case)
            except CaseTemplateError as err:
                case_errors[(candidate.id, case.id)] = str(err)
    return CandidatePlan(
        candidates=tuple(candidates),
        graders=tuple(graders),
        weights={c.id: candidate_weights(c, graders) for c in candidates},
        case_errors=case_errors,
    )


async def _one(grader: Grader, sample: GradeInput) -> tuple[float | None, bool | None, str]:
    try:
        result = await grader.grade(sample)
    except GraderError as err:
        return None, None, str(err)
    return result.score, result.passed, result.reason


async def grade_sample(
    plan: CandidatePlan,
    candidate: Candidate,
    case: TestCase,
    output: str,
    *,
    run_id: str,
    iteration: int,
    values: Mapping[str, object] | None = None,
) -> list[GraderScoreRecord]:
    """Grade one output of ``candidate`` for ``case`` with every grader of the plan.

    ``values`` are the sample's computed ``ResultRecord`` fields (for built-ins). The
    graders run concurrently; one that fails gives a row with a null score and the
    failure as its reason, and the others still run.
    """
    sample = GradeInput(output=output, case=case, values=values or {})
    outcomes = await asyncio.gather(*(_one(g, sample) for g in plan.graders))
    return [
        GraderScoreRecord(
            run_id=run_id,
            iteration=iteration,
            sample_id=case.id,
            candidate=candidate.id,
            grader=grader.id,
            score=score,
            passed=passed,
            reason=reason,
            weight=plan.weight(candidate.id, grader.id),
        )
        for grader, (score, passed, reason) in zip(plan.graders, outcomes, strict=True)
    ]


def failed_sample_rows(
    plan: CandidatePlan,
    candidate: Candidate,
    case: TestCase,
    error: str,
    *,
    run_id: str,
    iteration: int,
) -> list[GraderScoreRecord]:
    """Rows for a sample that produced no output (target error, template error): every
    grader gets a null score with ``error`` as the reason, so the sample counts as not
    passed and its absence is visible per grader."""
    return [
        GraderScoreRecord(
            run_id=run_id,
            iteration=iteration,
            sample_id=case.id,
            candidate=candidate.id,
            grader=grader.id,
            score=None,
            passed=None,
            reason=error,
            weight=plan.weight(candidate.id, grader.id),
        )
        for grader in plan.graders
    ]


def write_grader_scores(
    lake: Path, run_id: str, iteration: int, rows: Sequence[GraderScoreRecord]
) -> Path | None:
    """Append ``rows`` (one run and iteration) to the lake table ``grader_scores``."""
    return write_part(lake, "grader_scores", run_id, iteration, rows)
