"""docs/architecture.md draws the import graph from the code: the picture is current."""

from __future__ import annotations

from pathlib import Path

from tests.import_graph import mermaid

DOC = Path(__file__).resolve().parent.parent / "docs" / "architecture.md"


def test_the_import_graph_in_the_architecture_page_is_current() -> None:
    assert mermaid() in DOC.read_text(encoding="utf-8"), "run: python -m tests.import_graph"
