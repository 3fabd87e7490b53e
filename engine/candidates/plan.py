"""Candidates and graders of a run, checked before any call.

* ``plan_candidate_run`` loads the candidates and graders of a project folder and checks
  everything that can be checked before any call: malformed files, unknown grader ids
  (asked for or recommended), graders that cannot be bound (no embedder, a rubric given
  to the local judge), and which cases a candidate's templates cannot render (those
  become error rows of that case only);
* ``plan_for_run`` turns a run's settings (``RunConfig.candidates``, ``graders``,
  ``project``) into a plan; ``--graders`` without ``--candidates`` grades the run's own
  responses, written as candidate ``""``;
* ``project_digest`` fingerprints the project's files, so a resume grades exactly as the
  run started or is refused.

Weights (the write-up's "Weighted Scoring"): a candidate that declares
``recommended_graders`` weighs them as declared and every other grader 0 (the write-up's
loop runs over the declared weights only); a candidate that declares none uses each
grader file's ``weight`` (1 by default). The weight is written on every row, so the
warehouse view ``candidate_scores`` needs nothing else.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from engine.candidates import Candidate, CaseTemplateError, load_candidates
from engine.embedders.base import Embedder
from engine.graders import (
    Grader,
    GraderConfigError,
    GraderJudges,
    GraderSpec,
    load_graders,
    resolve_specs,
)
from engine.graders.judged import grader_judge_spec
from engine.models import CandidateLineageRecord, RunConfig, TestCase


@dataclass(frozen=True)
class CandidatePlan:
    """What a multi-candidate run will do, checked before anything is called."""

    candidates: tuple[Candidate, ...]
    """The candidates, in the order asked; empty when the run grades its own responses
    (written as candidate ``""``)."""
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
    judges: GraderJudges | None = None,
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
    graders = load_graders(
        project / "graders", names, embedder=embedder, judge=judge, judges=judges
    )
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


def lineage_records(run_id: str, plan: CandidatePlan | None) -> list[CandidateLineageRecord]:
    """The lineage of the plan's candidates (parent and edit as their files say), so the
    warehouse can show a family tree with scores; empty without candidates."""
    if plan is None:
        return []
    return [
        CandidateLineageRecord(
            run_id=run_id,
            candidate=c.id,
            family=c.family,
            parent=c.parent,
            edit=c.edit,
            variant_label=c.variant_label,
            name=c.name,
            prompt_sha256=hashlib.sha256(c.system_prompt.encode("utf-8")).hexdigest(),
        )
        for c in plan.candidates
    ]


def project_digest(project: Path) -> str:
    """sha256 over the names and bytes of every candidate and grader file of ``project``,
    the Python under ``graders/`` included (a python grader's code grades as its file)."""
    digest = hashlib.sha256()
    files = sorted(
        p
        for pattern in ("candidates/**/*.md", "graders/*.yaml", "graders/*.yml", "graders/**/*.py")
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
    judges: GraderJudges | None = None,
) -> CandidatePlan:
    """A plan that grades the run's own responses (candidate ``""``) with the named
    graders (every grader file when None), each weighing its file's weight."""
    names = list(grader_names) if grader_names is not None else None
    graders = load_graders(
        project / "graders", names, embedder=embedder, judge=judge, judges=judges
    )
    if not graders:
        raise GraderConfigError(
            f"no graders: {project / 'graders'} has no grader files and none was named"
        )
    return CandidatePlan(
        candidates=(),
        graders=tuple(graders),
        weights={"": {g.id: g.weight for g in graders}},
    )


def project_folder(config: RunConfig) -> Path:
    """The project folder of a run (the working directory when none was given)."""
    return Path(config.project or ".").resolve()


def with_project(config: RunConfig) -> RunConfig:
    """``config`` with its project folder made absolute and the digest of its files, so a
    resumed run grades with the same files or is refused. Without candidates and graders
    the folder computes nothing, so it is dropped (it must not tell two runs apart)."""
    if not config.uses_graders:
        return config.model_copy(update={"project": None, "project_digest": None})
    project = project_folder(config)
    return config.model_copy(
        update={"project": str(project), "project_digest": project_digest(project)}
    )


def plan_for_run(
    config: RunConfig,
    cases: Sequence[TestCase],
    *,
    embedder: Embedder | None = None,
    judge: object | None = None,
    judges: GraderJudges | None = None,
) -> CandidatePlan | None:
    """The plan of a run: its candidates (or its own responses) and graders, checked;
    None when the run uses neither.

    Raises CandidateFileError, GraderFileError or GraderConfigError before any call.
    """
    if not config.uses_graders:
        return None
    project = project_folder(config)
    graders = list(config.graders) if config.graders is not None else None
    if config.candidates is None:
        return plan_responses(project, graders, embedder=embedder, judge=judge, judges=judges)
    return plan_candidate_run(
        project,
        list(config.candidates),
        graders,
        cases,
        embedder=embedder,
        judge=judge,
        judges=judges,
    )


def run_files(config: RunConfig) -> tuple[list[Candidate], list[GraderSpec]]:
    """The candidates and grader specs a run would use, validated but not bound (for
    estimates: nothing is built). Raises the same file errors as ``plan_for_run``."""
    if not config.uses_graders:
        return [], []
    project = project_folder(config)
    if config.candidates is None:
        names = list(config.graders) if config.graders is not None else None
        return [], resolve_specs(project / "graders", names)
    candidates = load_candidates(project / "candidates", list(config.candidates))
    names = grader_names_for(candidates, config.graders)
    return candidates, resolve_specs(project / "graders", names)


def check_run_files(config: RunConfig) -> None:
    """Refuse a run whose project folder, candidate or grader files are wrong, before
    anything is built or called. Raises CandidateFileError, GraderFileError or
    GraderConfigError (all InputErrors: the CLI prints them and exits 2)."""
    if not config.uses_graders:
        return
    project = project_folder(config)
    if not project.is_dir():
        raise GraderConfigError(f"project folder {project} does not exist (--project)")
    _, graders = run_files(config)
    for spec in graders:
        grader_judge_spec(spec, config.judge)  # a bare model name needs the run's provider
    if not graders:
        who = (
            f"candidates {', '.join(config.candidates)} recommend none and "
            if config.candidates is not None
            else ""
        )
        raise GraderConfigError(
            f"no graders: {who}{project / 'graders'} has no grader files; name some with --graders"
        )
