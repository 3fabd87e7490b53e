"""An experiment as the dashboard launches it: the one home for building and checking the
``RunConfig`` of a launch (the Experiments page and the sidebar's quick form both call it).

An experiment is a test set, the project's candidates (prompt files) and graders, a target
model, the judge(s) and their temperature, and iterations. The project is the folder
holding ``candidates/`` and ``graders/``: ``--project DIR`` after ``--`` on the streamlit
command line, else ``$EVALHOUSE_PROJECT``, else the evalhouse home. It is never typed in a
form: a visitor must not point the server at a folder of their choosing (grader files may
name Python functions). No Streamlit here.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import ValidationError

from dashboard.access import Access
from engine.candidates.files import load_candidates
from engine.candidates.model import Candidate
from engine.candidates.plan import run_files
from engine.errors import InputError
from engine.graders.judged import grader_judge_spec
from engine.graders.options import BUILTIN_TYPES
from engine.graders.spec import check_id
from engine.graders.spec_files import read_grader_file, read_grader_folder
from engine.models import RunConfig
from engine.settings import Paths
from engine.targets.candidate import candidate_model

GRADER_SUFFIXES = (".yaml", ".yml")
"""Grader files the Experiments page accepts as uploads."""
MAX_GRADER_BYTES = 64_000
"""A grader file is a few lines; a bigger upload is not one."""
_NOT_ALLOWED = "not a %s this dashboard may launch"
CODE_TYPES = frozenset({"python"})
"""Grader types that run code of the project: never from an upload."""


@dataclass(frozen=True)
class ProjectItem:
    """A candidate or grader the page offers, as a person picks it."""

    id: str
    """What the run config names."""
    name: str
    """Human name."""
    description: str
    """What it is for (empty when its file says nothing)."""
    kind: str
    """A grader's type, or a candidate's model (``the target`` when it has none)."""


def project_folder(paths: Paths) -> Path:
    """The dashboard's project: ``--project DIR`` on the command line, else
    ``$EVALHOUSE_PROJECT``, else the home."""
    argv = sys.argv[1:]
    for i, arg in enumerate(argv):
        if arg == "--project" and i + 1 < len(argv):
            return Path(argv[i + 1]).expanduser().resolve()
        if arg.startswith("--project="):
            return Path(arg.split("=", 1)[1]).expanduser().resolve()
    env = os.environ.get("EVALHOUSE_PROJECT")
    return Path(env).expanduser().resolve() if env else paths.home.resolve()


def project_candidates(project: Path) -> list[ProjectItem]:
    """Every candidate file of the project. Raises CandidateFileError for a broken one."""
    folder = project / "candidates"
    if not folder.is_dir():
        return []
    return [
        ProjectItem(c.id, c.name, c.description, c.model or "the target")
        for c in load_candidates(folder)
    ]


def project_graders(project: Path) -> list[ProjectItem]:
    """Every grader file of the project, then the built-ins no file overrides. Raises
    GraderFileError for a broken file."""
    folder = project / "graders"
    specs = read_grader_folder(folder) if folder.is_dir() else {}
    items = [ProjectItem(s.id, s.name or s.id, s.description, s.type) for s in specs.values()]
    items += [
        ProjectItem(name, name, "built-in score of the run", "built-in")
        for name in BUILTIN_TYPES
        if name not in specs
    ]
    return items


def experiment_config(
    *,
    test_set: Path,
    name: str,
    judge: str,
    embedder: str,
    target: str,
    iterations: int,
    concurrency: int,
    jury: Sequence[str] = (),
    judge_temperature: float | None = None,
    candidates: Sequence[str] = (),
    graders: Sequence[str] = (),
    project: Path | None = None,
) -> RunConfig:
    """The config of a launch. Candidates and graders need the project; none of either
    leaves the run as the sidebar always launched it (its own scores only). Raises
    InputError with one line naming what is wrong."""
    if not name.strip():
        raise InputError("give the run a name")
    uses_files = bool(candidates) or bool(graders)
    if uses_files and project is None:
        raise InputError("candidates and graders need the dashboard's project folder")
    try:
        return RunConfig(
            test_set=str(test_set),
            name=name.strip(),
            judge=judge,
            jury=tuple(j for j in jury if j != judge),
            judge_temperature=judge_temperature,
            embedder=embedder,
            target=target,
            iterations=iterations,
            concurrency=concurrency,
            candidates=tuple(candidates) or None,
            graders=tuple(graders) or None,
            project=str(project) if uses_files and project is not None else None,
        )
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem["loc"]) or "config"
        raise InputError(f"{where}: {problem['msg']}") from None


def _candidate_target(candidate: Candidate, run_target: str) -> str:
    """The target spec a candidate answers with, in the allow-list's terms."""
    if candidate.runner == "http_endpoint":
        url = candidate.endpoint.url if candidate.endpoint is not None else ""
        return f"http:{url}"
    return f"openai:{candidate_model(candidate, run_target)}"


def launch_refusal(rules: Access, config: RunConfig, project: Path | None) -> str | None:
    """Why the dashboard may not launch ``config``; None when it may. The operator's lists
    (``rules.refusal``), then what the project's files would call: a candidate's own model
    is a target and a grader's own judge a judge, each on the operator's list, and only
    files of the dashboard's own project."""
    refusal = rules.refusal(config)
    if refusal is not None or not config.uses_graders:
        return refusal
    if project is None or Path(config.project or "") != project:
        return "candidates and graders come from the dashboard's project folder only"
    try:
        candidates, graders = run_files(config)
        for candidate in candidates:
            spec = _candidate_target(candidate, config.target)
            if spec not in rules.targets:
                return f"candidate {candidate.id!r} calls {spec!r}: {_NOT_ALLOWED % 'target'}"
        for grader in graders:
            spec = grader_judge_spec(grader, config.judge)
            if spec not in rules.judges:
                return f"grader {grader.id!r} is judged by {spec!r}: {_NOT_ALLOWED % 'judge'}"
    except InputError as exc:
        return str(exc).splitlines()[0]
    return None


def save_grader_upload(project: Path, file_name: str, content: bytes) -> Path:
    """Save an uploaded grader file into the project's ``graders/`` after checking it:
    YAML, a grader of a type that runs no code, an id no other file has. Raises InputError
    with one line naming the file and the reason."""
    base = Path(file_name).name
    if Path(base).suffix.lower() not in GRADER_SUFFIXES:
        raise InputError(f"{base}: a grader file must be .yaml or .yml")
    if len(content) > MAX_GRADER_BYTES:
        raise InputError(f"{base}: larger than {MAX_GRADER_BYTES} bytes")
    try:
        raw = yaml.safe_load(content.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise InputError(f"{base}: not a YAML file ({type(exc).__name__})") from None
    if not isinstance(raw, dict):
        raise InputError(f"{base}: expected a mapping with type and options")
    kind = str(raw.get("type", "")).strip().lower()
    if kind in CODE_TYPES:
        raise InputError(
            f"{base}: field 'type': a {kind} grader runs code; add it to the project's "
            "graders/ folder yourself, never by upload"
        )
    stem = str(raw.get("id") or Path(base).stem)
    try:
        check_id(stem)
    except ValueError as exc:
        raise InputError(f"{base}: field 'id': {exc}") from None
    folder = project / "graders"
    target = folder / f"{stem}.yaml"
    existing = read_grader_folder(folder) if folder.is_dir() else {}
    if stem in existing or target.exists():
        raise InputError(f"{base}: the project already has a grader {stem!r}")
    with tempfile.TemporaryDirectory(prefix="evalhouse-grader-") as scratch:
        staged = Path(scratch) / target.name
        staged.write_bytes(content)
        try:
            read_grader_file(staged)  # the same checks as a run's, before it is in the project
        except InputError as exc:
            raise InputError(f"{base}: {str(exc).splitlines()[0]}") from None
    folder.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)
    return target
