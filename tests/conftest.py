"""Shared fixtures: a fresh evalhouse home in a temporary folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.settings import Paths, resolve_paths


@pytest.fixture
def home(tmp_path: Path) -> Paths:
    """Paths of an empty evalhouse home."""
    return resolve_paths(tmp_path / "home")
