"""Grader files on disk: one YAML file read and checked (``parse_grader``), and a project's
grader folder read whole, every problem of every file named at once."""

from __future__ import annotations

from pathlib import Path

import yaml

from engine.files import MAX_SPEC_BYTES, UserFileError, read_user_bytes
from engine.graders.spec import GraderFileError, GraderProblem, GraderSpec, parse_grader


def read_grader_file(path: Path) -> GraderSpec:
    """Read and validate one grader file. Raises GraderFileError."""
    file = str(path)
    try:
        text = read_user_bytes(path, "grader file", MAX_SPEC_BYTES).decode("utf-8")
    except (UserFileError, UnicodeDecodeError) as err:
        raise GraderFileError([GraderProblem(file, "", f"cannot read the file: {err}")]) from err
    try:
        raw = yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError) as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err)
        raise GraderFileError(
            [GraderProblem(file, "", f"invalid YAML{where}: {problem}")]
        ) from None
    return parse_grader(raw, file, path.stem, path.parent)


def grader_files(folder: Path) -> list[Path]:
    """The grader files of a folder (``*.yaml`` and ``*.yml``), sorted by name."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in (".yaml", ".yml"))


def read_grader_folder(folder: Path) -> dict[str, GraderSpec]:
    """Every grader file of ``folder`` by id. Raises GraderFileError naming every problem."""
    problems: list[GraderProblem] = []
    specs: dict[str, GraderSpec] = {}
    for path in grader_files(folder):
        try:
            spec = read_grader_file(path)
        except GraderFileError as err:
            problems += err.problems
            continue
        if spec.id in specs:
            problems.append(
                GraderProblem(
                    str(path), "id", f"id {spec.id!r} is already used by {specs[spec.id].source}"
                )
            )
            continue
        specs[spec.id] = spec
    if problems:
        raise GraderFileError(problems)
    return specs
