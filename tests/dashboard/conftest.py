"""Fixture homes for the dashboard tests (built once per session) and an AppTest factory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engine.settings import Paths, resolve_paths
from tests.dashboard.fixture_home import build_empty_home, build_fixture_home

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "streamlit_app.py")


@pytest.fixture(scope="session")
def fixture_home(tmp_path_factory: pytest.TempPathFactory) -> Paths:
    """The hand-chosen warehouse of ``fixture_home.py``."""
    return build_fixture_home(tmp_path_factory.mktemp("dash") / "home")


@pytest.fixture(scope="session")
def empty_home(tmp_path_factory: pytest.TempPathFactory) -> Paths:
    """A warehouse with the schema and no runs."""
    return build_empty_home(tmp_path_factory.mktemp("dash-empty") / "home")


@pytest.fixture
def missing_home(tmp_path: Path) -> Paths:
    """A home without a warehouse file."""
    return resolve_paths(tmp_path / "nothing-here")


AppFactory = Callable[..., AppTest]


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch) -> AppFactory:
    """``app(home, page=None, **query)``: an AppTest of the dashboard on ``home``, already run."""

    def make(home: Paths, page: str | None = None, **query: str) -> AppTest:
        monkeypatch.setenv("EVALHOUSE_HOME", str(home.home))
        at = AppTest.from_file(APP, default_timeout=30)
        for key, value in query.items():
            at.query_params[key] = value
        if page is not None:
            at.switch_page(f"app_pages/{page}.py")
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        return at

    return make


def table(at: AppTest, column: str, nth: int = 0) -> list[dict[str, object]]:
    """The rows (display values) of the ``nth`` dataframe on the page that has ``column``."""
    found = [f for f in at.dataframe if column in f.value.columns]
    if len(found) <= nth:
        have = [list(f.value.columns) for f in at.dataframe]
        raise AssertionError(f"no dataframe with column {column!r}; have {have}")
    return found[nth].value.to_dict("records")  # type: ignore[no-any-return]
