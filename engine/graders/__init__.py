"""Graders as files: deterministic, embedding, rubric and built-in graders.

See ``engine.graders.spec`` for the file format and ``load_graders`` for the entry point.
"""

from engine.graders.base import (
    GradeInput,
    Grader,
    GraderConfigError,
    GraderError,
    GraderJudges,
    GraderResult,
    SyncGrader,
)
from engine.graders.local_rubric import LocalJudgeRefusal
from engine.graders.options import BUILTIN_TYPES
from engine.graders.registry import build_grader, load_graders, resolve_specs
from engine.graders.rubric import RubricJudge
from engine.graders.spec import (
    GRADER_TYPES,
    GraderFileError,
    GraderProblem,
    GraderSpec,
)
from engine.graders.spec_files import read_grader_file
from engine.judges.base import RubricVerdict

__all__ = [
    "BUILTIN_TYPES",
    "GRADER_TYPES",
    "GradeInput",
    "Grader",
    "GraderConfigError",
    "GraderError",
    "GraderFileError",
    "GraderJudges",
    "GraderProblem",
    "GraderResult",
    "GraderSpec",
    "LocalJudgeRefusal",
    "RubricJudge",
    "RubricVerdict",
    "SyncGrader",
    "build_grader",
    "load_graders",
    "read_grader_file",
    "resolve_specs",
]
