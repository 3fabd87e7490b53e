"""From grader files and built-in names to bound ``Grader`` objects, before anything runs.

``load_graders`` is the one entry point: it reads and validates every grader file of
the folder, resolves the requested names (file ids first, then built-in names), and binds
each grader to the injected embedder or judge. Every problem surfaces here, as a
``GraderFileError`` (malformed files) or ``GraderConfigError`` (unknown names, a missing
embedder or judge, a rubric given to the local judge), so no output is generated for a
run that cannot be graded.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from engine.embedders.base import Embedder
from engine.graders.analysis import FactualCorrectnessGrader, IsRefusalGrader, NliGrader
from engine.graders.base import Grader, GraderConfigError, GraderJudges
from engine.graders.builtin import BuiltinGrader
from engine.graders.deterministic import (
    ContainsGrader,
    ExactMatchGrader,
    JsonSchemaGrader,
    RegexGrader,
)
from engine.graders.judged import JUDGED_GRADERS
from engine.graders.options import ANALYSIS_TYPES, BUILTIN_TYPES, OVERLAP_OPTIONS
from engine.graders.overlap import OverlapGrader
from engine.graders.python_grader import PythonGrader
from engine.graders.rubric import RubricGrader, where
from engine.graders.semantic import SemanticSimilarityGrader
from engine.graders.spec import GraderSpec, builtin_spec
from engine.graders.spec_files import read_grader_folder
from engine.judges.base import JudgeError


def build_grader(
    spec: GraderSpec,
    *,
    embedder: Embedder | None = None,
    judge: object | None = None,
    judges: GraderJudges | None = None,
) -> Grader:
    """Build one grader from its spec, bound to ``judge`` (the run's) or, when the spec
    names its own, to the one ``judges`` builds. Raises GraderConfigError when it cannot
    be bound."""
    kind = spec.type
    if spec.own_judge:
        judge = _own_judge(spec, judges)
    if kind == "exact-match":
        return ExactMatchGrader(spec)
    if kind == "contains":
        return ContainsGrader(spec)
    if kind == "regex":
        return RegexGrader(spec)
    if kind == "json-schema":
        return JsonSchemaGrader(spec)
    if kind == "semantic-similarity":
        if embedder is None:
            where = f" ({spec.source})" if spec.source else ""
            raise GraderConfigError(
                f"grader {spec.id!r}{where} is semantic-similarity and needs an embedder; "
                "none was configured"
            )
        return SemanticSimilarityGrader(spec, embedder)
    if kind in OVERLAP_OPTIONS:
        return OverlapGrader(spec)
    if kind == "llm-rubric":
        return RubricGrader(spec, judge)
    if kind in BUILTIN_TYPES:
        return BuiltinGrader(spec)
    if kind in JUDGED_GRADERS:
        return JUDGED_GRADERS[kind](spec, judge)
    if kind == "is-refusal":
        return IsRefusalGrader(spec)
    if kind == "factual-correctness":
        return FactualCorrectnessGrader(spec, judge)
    if kind == "nli":
        return NliGrader(spec, judge)
    if kind == "python":
        return PythonGrader(spec)
    raise GraderConfigError(f"grader {spec.id!r}: no implementation for type {kind!r}")


def _own_judge(spec: GraderSpec, judges: GraderJudges | None) -> object:
    named = spec.judge if spec.judge is not None else "the run's judge"
    if judges is None:
        raise GraderConfigError(f"{where(spec)} names its own judge ({named}); none is built here")
    try:
        return judges(spec.judge, spec.judge_temperature)
    except JudgeError as err:
        raise GraderConfigError(f"{where(spec)}: its judge {named}: {err}") from err


def resolve_specs(folder: Path | None, names: Sequence[str] | None = None) -> list[GraderSpec]:
    """The specs of ``names`` (all files of ``folder`` when None), validated.

    Every file of the folder is validated even when only some are asked for, so a broken
    file is found the first time anyone runs, not the day someone selects it. A name is
    looked up among file ids first, so a file may override a built-in's threshold.
    Raises GraderFileError or GraderConfigError.
    """
    specs = read_grader_folder(folder) if folder is not None else {}
    if names is None:
        return list(specs.values())
    out: list[GraderSpec] = []
    unknown: list[str] = []
    for name in dict.fromkeys(n.strip() for n in names if n.strip()):
        if name in specs:
            out.append(specs[name])
        elif name in BUILTIN_TYPES or name in ANALYSIS_TYPES:
            out.append(builtin_spec(name))
        else:
            unknown.append(name)
    if unknown:
        place = f"no file in {folder} has that id" if folder is not None else "no grader folder"
        listed = ", ".join(repr(u) for u in unknown)
        raise GraderConfigError(
            f"unknown grader{'s' if len(unknown) > 1 else ''} {listed}: {place}, and "
            f"{'they are' if len(unknown) > 1 else 'it is'} not built-in "
            f"(built-ins: {', '.join((*BUILTIN_TYPES, *ANALYSIS_TYPES))})"
        )
    return out


def load_graders(
    folder: Path | None,
    names: list[str] | None = None,
    *,
    embedder: Embedder | None = None,
    judge: object | None = None,
    judges: GraderJudges | None = None,
) -> list[Grader]:
    """Load, validate and bind graders: every file of ``folder``, or the given ``names``.

    ``folder`` is the folder holding the ``*.yaml`` grader files (a project's ``graders/``);
    None or a missing folder leaves only the built-ins. A grader that names its own judge
    gets the one ``judges`` builds (``engine.graders.base.GraderJudges``). Raises
    GraderFileError naming every malformed file, field and reason, or GraderConfigError
    with one line per grader that cannot be bound; nothing is called before this returns.
    """
    specs = resolve_specs(folder, names)
    graders: list[Grader] = []
    problems: list[GraderConfigError] = []
    for spec in specs:
        try:
            graders.append(build_grader(spec, embedder=embedder, judge=judge, judges=judges))
        except GraderConfigError as err:
            problems.append(err)
    if problems:
        # Keep the specific type (LocalJudgeRefusal) when every problem has it.
        kind = type(problems[0])
        if any(type(p) is not kind for p in problems):
            kind = GraderConfigError
        raise kind("\n".join(str(p) for p in problems))
    return graders
