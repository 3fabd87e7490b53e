"""Where evalhouse keeps its data: ``EVALHOUSE_HOME`` or ``--home``."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_HOME = "./evalhouse-data"


@dataclass(frozen=True)
class Paths:
    """The folders and files under one evalhouse home."""

    home: Path

    @property
    def lake(self) -> Path:
        """Root of the Parquet lake (the source of truth)."""
        return self.home / "lake"

    @property
    def warehouse(self) -> Path:
        """The DuckDB warehouse file (rebuildable from the lake)."""
        return self.home / "warehouse.duckdb"

    @property
    def cache(self) -> Path:
        """Embedding and judge-response caches."""
        return self.home / "cache"

    @property
    def progress(self) -> Path:
        """Per-run progress files for resume."""
        return self.home / "progress"

    @property
    def test_sets(self) -> Path:
        """Test sets the dashboard offers to launch runs on."""
        return self.home / "test-sets"


def resolve_paths(home: str | os.PathLike[str] | None = None) -> Paths:
    """The paths for ``home``, else ``$EVALHOUSE_HOME``, else ``./evalhouse-data``."""
    chosen = home if home is not None else os.environ.get("EVALHOUSE_HOME") or DEFAULT_HOME
    return Paths(Path(chosen).expanduser().resolve())
