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
* ``write_grader_scores`` appends rows to the lake table ``grader_scores``;
* ``CandidateRunSpec`` is what a run asks for (candidate ids, grader ids, project folder),
  kept in ``RunConfig.extra`` so a resumed run grades exactly as it started, and
  ``plan_for_run`` turns it into a plan (``--graders`` without ``--candidates`` grades
  the run's own responses as the candidate ``""``).

Weights (the write-up's "Weighted Scoring"): a candidate that declares
``recommended_graders`` weighs them as declared and every other grader 0 (the write-up's
loop runs over the declared weights only); a candidate that declares none uses each
grader file's ``weight`` (1 by default). The weight is written on every row, so the
warehouse view ``candidate_scores`` needs nothing else.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.candidates import Candidate, CaseTemplateError, load_candidates
from engine.embedders.base import Embedder
from engine.graders import (
    GradeInput,
    Grader,
    GraderConfigError,
    GraderError,
    GraderSpec,
    SyncGrader,
    load_graders,
    resolve_specs,
)
from engine.judges.base import Usage
from engine.lake import write_part
from engine.models import GraderScoreRecord, TestCase

RESPONSES = Candidate(id="", family="", name="responses of the run's target")
"""The pseudo-candidate of a run graded without candidates: the recorded (or ``--target``)
responses, written with ``candidate = ""`` like every single-candidate record."""


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


def grader_names_for(
    candidates: Sequence[Candidate], grader_names: Sequence[str] | None
) -> list[str] | None:
    """The grader ids a run uses: those named, else those the candidates recommend (in
    order of first mention), else None (every grader file)."""
    if grader_names is not None:
        return list(grader_names)
    recommended = [g.grader for c in candidates for g in c.recommended_graders]
    return list(dict.fromkeys(recommended)) or None


def template_errors(
    candidates: Sequence[Candidate], cases: Sequence[TestCase]
) -> dict[tuple[str, str], str]:
    """(candidate id, case id) -> why the candidate's templates cannot render that case
    (a ``{{metadata.x}}`` the case lacks); those samples become error rows, no call."""
    out: dict[tuple[str, str], str] = {}
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
                out[(candidate.id, case.id)] = str(err)
    return out


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
    names = grader_names_for(candidates, grader_names)
    graders = load_graders(project / "graders", names, embedder=embedder, judge=judge)
    if not graders:
        raise GraderConfigError(
            f"no graders: {project / 'graders'} has no grader files and none was named"
        )
    case_errors = template_errors(candidates, cases)
    return CandidatePlan(
        candidates=tuple(candidates),
        graders=tuple(graders),
        weights={c.id: candidate_weights(c, graders) for c in candidates},
        case_errors=case_errors,
    )


_Outcome = tuple[float | None, bool | None, str, Usage]


def _failed(grader: Grader, err: Exception) -> _Outcome:
    if isinstance(err, GraderError):
        return None, None, str(err), Usage()
    # A bug in one grader (or the judge behind it) must not take the others down.
    return None, None, f"grader {grader.id!r} failed: {type(err).__name__}: {err}", Usage()


async def _one(grader: Grader, sample: GradeInput) -> _Outcome:
    try:
        result = await grader.grade(sample)
    except Exception as err:
        return _failed(grader, err)
    return result.score, result.passed, result.reason, result.usage


def _inline(grader: Grader, sample: GradeInput) -> _Outcome:
    try:
        result = grader.grade_sync(sample)  # type: ignore[attr-defined]
    except Exception as err:
        return _failed(grader, err)
    return result.score, result.passed, result.reason, result.usage


def _runs_inline(grader: Grader) -> bool:
    # A SyncGrader that keeps the base ``grade`` does no I/O and never awaits: calling it
    # directly saves a task per grader and sample (semantic-similarity overrides ``grade``
    # to embed in a thread, so it is gathered with the async graders).
    return isinstance(grader, SyncGrader) and type(grader).grade is SyncGrader.grade


async def grade_sample_with_usage(
    plan: CandidatePlan,
    candidate: Candidate,
    case: TestCase,
    output: str,
    *,
    run_id: str,
    iteration: int,
    values: Mapping[str, object] | None = None,
) -> tuple[list[GraderScoreRecord], Usage]:
    """``grade_sample``, plus what grading cost (judge and embedder tokens of the graders),
    so the runner can add it to the sample's judge tokens and cost."""
    sample = GradeInput(output=output, case=case, values=values or {})
    outcomes: list[_Outcome | None] = [
        _inline(g, sample) if _runs_inline(g) else None for g in plan.graders
    ]
    waiting = [i for i, o in enumerate(outcomes) if o is None]
    if waiting:
        done = await asyncio.gather(*(_one(plan.graders[i], sample) for i in waiting))
        for i, got in zip(waiting, done, strict=True):
            outcomes[i] = got
    rows: list[GraderScoreRecord] = []
    usage = Usage()
    for grader, outcome in zip(plan.graders, outcomes, strict=True):
        assert outcome is not None
        score, passed, reason, used = outcome
        usage = usage + used
        rows.append(
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
        )
    return rows, usage


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

    ``values`` are the sample's computed ``ResultRecord`` fields (for built-ins). Graders
    that do no I/O run inline, the others concurrently; one that fails gives a row with a
    null score and the failure as its reason, and the others still run.
    """
    rows, _ = await grade_sample_with_usage(
        plan, candidate, case, output, run_id=run_id, iteration=iteration, values=values
    )
    return rows


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


# --------------------------------------------------------------------------- run spec


def _ids(value: Any, key: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not all(isinstance(i, str) for i in items):
        raise GraderConfigError(f"run option {key} must be a list of ids, got {value!r}")
    ids = tuple(dict.fromkeys(i.strip() for i in items if i.strip()))
    if not ids:
        raise GraderConfigError(f"run option {key} names no id")
    return ids


@dataclass(frozen=True)
class CandidateRunSpec:
    """What a run asks of candidates and graders (stored in ``RunConfig.extra``)."""

    project: Path
    """The project folder holding ``candidates/`` and ``graders/`` (absolute)."""
    candidates: tuple[str, ...] | None = None
    """Candidate ids (``--candidates``); None grades the run's own responses."""
    graders: tuple[str, ...] | None = None
    """Grader ids (``--graders``); None takes the candidates' recommendations, else all."""

    KEYS = ("candidates", "graders", "project", "project_digest")
    """The ``RunConfig.extra`` keys this spec reads and writes."""

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any]) -> CandidateRunSpec | None:
        """The spec in a run's ``extra``; None when the run uses neither candidates nor
        graders (a run exactly as before issue 7)."""
        candidates = _ids(extra.get("candidates"), "candidates")
        graders = _ids(extra.get("graders"), "graders")
        if candidates is None and graders is None:
            return None
        project = extra.get("project")
        return cls(Path(str(project) if project else ".").resolve(), candidates, graders)

    def to_extra(self) -> dict[str, Any]:
        """The ``extra`` entries of this spec, with a digest of the project's files so a
        run whose candidate or grader files changed is not resumed as the same run."""
        out: dict[str, Any] = {"project": str(self.project)}
        if self.candidates is not None:
            out["candidates"] = list(self.candidates)
        if self.graders is not None:
            out["graders"] = list(self.graders)
        out["project_digest"] = project_digest(self.project)
        return out


def project_digest(project: Path) -> str:
    """sha256 over the names and bytes of every candidate and grader file of ``project``."""
    digest = hashlib.sha256()
    files = sorted(
        p
        for pattern in ("candidates/**/*.md", "graders/*.yaml", "graders/*.yml")
        for p in project.glob(pattern)
        if p.is_file()
    )
    for path in files:
        digest.update(path.relative_to(project).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def plan_responses(
    project: Path,
    grader_names: Sequence[str] | None,
    *,
    embedder: Embedder | None = None,
    judge: object | None = None,
) -> CandidatePlan:
    """A plan that grades the run's own responses (candidate ``""``) with the named
    graders (every grader file when None), each weighing its file's weight."""
    names = list(grader_names) if grader_names is not None else None
    graders = load_graders(project / "graders", names, embedder=embedder, judge=judge)
    if not graders:
        raise GraderConfigError(
            f"no graders: {project / 'graders'} has no grader files and none was named"
        )
    return CandidatePlan(
        candidates=(RESPONSES,),
        graders=tuple(graders),
        weights={RESPONSES.id: {g.id: g.weight for g in graders}},
    )


def plan_for_run(
    spec: CandidateRunSpec,
    cases: Sequence[TestCase],
    *,
    embedder: Embedder | None = None,
    judge: object | None = None,
) -> CandidatePlan:
    """The plan of a run: its candidates (or its own responses) and graders, checked.

    Raises CandidateFileError, GraderFileError or GraderConfigError before any call.
    """
    graders = list(spec.graders) if spec.graders is not None else None
    if spec.candidates is None:
        return plan_responses(spec.project, graders, embedder=embedder, judge=judge)
    return plan_candidate_run(
        spec.project, list(spec.candidates), graders, cases, embedder=embedder, judge=judge
    )


def run_files(spec: CandidateRunSpec) -> tuple[list[Candidate], list[GraderSpec]]:
    """The candidates and grader specs a run would use, validated but not bound (for
    estimates: nothing is built). Raises the same file errors as ``plan_for_run``."""
    if spec.candidates is None:
        names = list(spec.graders) if spec.graders is not None else None
        return [], resolve_specs(spec.project / "graders", names)
    candidates = load_candidates(spec.project / "candidates", list(spec.candidates))
    names = grader_names_for(candidates, spec.graders)
    return candidates, resolve_specs(spec.project / "graders", names)


def check_run_files(spec: CandidateRunSpec) -> None:
    """Refuse a run whose project folder, candidate or grader files are wrong, before
    anything is built or called. Raises CandidateFileError, GraderFileError or
    GraderConfigError (all InputErrors: the CLI prints them and exits 2)."""
    if not spec.project.is_dir():
        raise GraderConfigError(f"project folder {spec.project} does not exist (--project)")
    _, graders = run_files(spec)
    if not graders:
        who = (
            f"candidates {', '.join(spec.candidates)} recommend none and "
            if spec.candidates is not None
            else ""
        )
        raise GraderConfigError(
            f"no graders: {who}{spec.project / 'graders'} has no grader files; "
            "name some with --graders"
        )
