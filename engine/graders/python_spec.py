"""``type: python`` grader files: where the function lives, checked before anything runs.

A Python grader names a function in a file of the project::

    # graders/tone.yaml
    type: python
    function: graders/tone.py:score   # relative to the project folder or to this file
    timeout_s: 2                      # optional per-call limit (default 5 s)

The loader checks, without running any of the project's code, that the file exists inside
the project folder, parses as Python, and defines the name at its top level; the module is
first imported by the grader's worker process when the grader is built
(``engine.graders.python_grader``). The file must lie inside the project folder (the
folder holding ``graders/``), and a grader given without a file (inline text, an upload)
cannot be ``python``: Python comes only from the operator's own project files.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from engine.graders.options import PythonOptions

HOISTED = ("function", "timeout_s")
"""Fields a python grader file may give at its top level as well as in ``options``."""


def hoist(data: dict[str, Any], options: dict[str, Any]) -> list[tuple[str, str]]:
    """Move ``function`` and ``timeout_s`` from the top level of a python grader file into
    its options (the issue's spelling, ``function:`` beside ``type:``). Returns (field,
    reason) for each given twice."""
    problems: list[tuple[str, str]] = []
    if data.get("type") != "python":
        return problems
    for key in HOISTED:
        if key in data:
            if key in options:
                problems.append((key, f"{key} is given twice"))
            options[key] = data.pop(key)
    return problems


def resolve_function(options: PythonOptions, base_dir: Path | None) -> PythonOptions:
    """``options`` with ``module_path`` set to the function's file, checked: inside the
    project folder (the grader folder's parent), valid Python, defining the function at
    its top level. Raises ValueError with the reason."""
    if base_dir is None:
        raise ValueError(
            "a python grader must be a file of the project's graders/ folder; Python cannot "
            "come from an upload or inline text"
        )
    file, _, name = options.function.rpartition(":")
    relative = Path(file)
    if relative.is_absolute():
        raise ValueError(f"{file!r} is absolute; give it relative to the project folder")
    grader_dir = base_dir.resolve()
    project = grader_dir.parent
    tried = [project / relative, grader_dir / relative]
    found = next((p for p in tried if p.is_file()), None)
    if found is None:
        shown = " or ".join(str(p) for p in dict.fromkeys(tried))
        raise ValueError(f"file {file!r} not found (looked for {shown})")
    path = found.resolve()
    if not path.is_relative_to(project):
        raise ValueError(f"{file!r} lies outside the project folder {project}")
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"cannot read {file!r}: {err}") from err
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as err:
        raise ValueError(f"{file!r} line {err.lineno}: syntax error: {err.msg}") from err
    defined = top_level_names(tree)
    if name not in defined:
        functions = sorted(n for n, is_def in defined.items() if is_def)
        listed = ", ".join(functions) if functions else "none"
        raise ValueError(f"{file!r} defines no {name!r} at its top level (its functions: {listed})")
    return options.model_copy(update={"module_path": str(path)})


def top_level_names(tree: ast.Module) -> dict[str, bool]:
    """Names bound at a module's top level, True for those bound by ``def``."""
    names: dict[str, bool] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names[node.name] = True
        elif isinstance(node, ast.ClassDef):
            names.setdefault(node.name, False)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                names.setdefault(bound, False)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    names.setdefault(target.id, False)
    return names
