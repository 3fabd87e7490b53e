"""Uploads never add Python: a run launched from the dashboard may grade with ``python``
graders only when their code is a file of the operator's project, never one that came in
through the dashboard's upload folder (``<home>/test-sets/``).

The upload itself accepts test-set files only (``launcher.save_upload``), and a grader
given as text rather than a project file cannot be ``python`` (``engine.graders.
python_spec``); this is the last check, on what a launch would actually import. No
Streamlit here.
"""

from __future__ import annotations

from pathlib import Path

from engine.candidates.plan import run_files
from engine.errors import InputError
from engine.graders.options import PythonOptions
from engine.models import RunConfig
from engine.settings import Paths


def launch_project(paths: Paths, config: RunConfig) -> Path:
    """The project folder a launched run reads: the config's, relative to the home (a
    launch runs in the home folder), else the home itself."""
    project = Path(config.project or ".").expanduser()
    return (project if project.is_absolute() else paths.home / project).resolve()


def uploaded_python(paths: Paths, config: RunConfig) -> str | None:
    """Why ``config`` may not be launched from the dashboard (a python grader whose code
    lies in the upload folder), or None. Grader files the run itself will refuse are left
    to it: its error says more than this check could."""
    if not config.uses_graders:
        return None
    located = config.model_copy(update={"project": str(launch_project(paths, config))})
    try:
        _, specs = run_files(located)
    except InputError:
        return None
    uploads = paths.test_sets.resolve()
    for spec in specs:
        options = spec.options
        if not isinstance(options, PythonOptions) or options.module_path is None:
            continue
        module = Path(options.module_path).resolve()
        if module.is_relative_to(uploads):
            return (
                f"grader {spec.id!r} runs {module.name}, which is in the dashboard's upload "
                "folder: python graders must be files of the project, never uploads"
            )
    return None
