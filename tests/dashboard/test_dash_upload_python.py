"""Dashboard uploads never add Python: the upload takes test sets only, and a launch whose
python grader would run code from the upload folder is refused before anything starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from dashboard import launcher
from dashboard.upload_guard import uploaded_python
from engine.models import RunConfig
from engine.settings import Paths, resolve_paths

GRADER = "type: python\nfunction: {function}\n"
MODULE = "def score(sample):\n    return 1.0\n"


@pytest.mark.parametrize("name", ["tone.py", "tone.yaml", "tone.yml", "tone.pyc"])
def test_the_upload_takes_no_code_and_no_grader_file(tmp_path: Path, name: str) -> None:
    paths = resolve_paths(tmp_path)
    with pytest.raises(ValueError, match=r"must be \.jsonl, \.json or \.csv"):
        launcher.save_upload(paths, name, MODULE.encode())
    assert not paths.test_sets.exists() or not any(paths.test_sets.iterdir())


def _home_project(paths: Paths, function: str, module_at: Path) -> RunConfig:
    """A launch that grades with ``tone`` from the home's own graders/ (a launch runs in
    the home folder, so with no --project the home is the project)."""
    (paths.home / "graders").mkdir(parents=True)
    (paths.home / "graders" / "tone.yaml").write_text(GRADER.format(function=function))
    module_at.parent.mkdir(parents=True, exist_ok=True)
    module_at.write_text(MODULE)
    cases = paths.test_sets / "cases.jsonl"
    cases.parent.mkdir(parents=True, exist_ok=True)
    cases.write_text('{"id": "q", "query": "Q?", "response": "A."}\n')
    return RunConfig(name="py", test_set=str(cases), graders=("tone",))


def test_a_python_grader_whose_code_is_in_the_upload_folder_is_never_launched(
    tmp_path: Path,
) -> None:
    paths = resolve_paths(tmp_path / "home")
    config = _home_project(paths, "test-sets/tone.py:score", paths.test_sets / "tone.py")
    why = uploaded_python(paths, config)
    assert why is not None
    assert why.startswith("grader 'tone' runs tone.py") and "upload folder" in why
    assert str(paths.home) not in why  # no server path reaches a page
    assert "python graders must be files of the project, never uploads" in why
    assert launcher.estimate(paths, config) == (False, why)
    with pytest.raises(ValueError, match="never uploads"):
        launcher.launch(paths, config)
    assert launcher.list_launches(paths) == []


def test_a_python_grader_of_the_project_is_launched(tmp_path: Path) -> None:
    paths = resolve_paths(tmp_path / "home")
    config = _home_project(paths, "graders/tone.py:score", paths.home / "graders" / "tone.py")
    assert uploaded_python(paths, config) is None
