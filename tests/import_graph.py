"""Print the import graph of the packages, as docs/architecture.md draws it (Mermaid).

``python -m tests.import_graph`` reads every file's imports (lazy ones included) and
draws an arrow from a package to each package it imports; inside ``evalhouse``, the
composition root, the nodes are its modules and ``commands``.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("evalhouse", "dashboard", "ingest", "warehouse", "engine")
SPLIT = {"evalhouse"}
"""Packages drawn as their modules and subpackages instead of one node."""


def node(module: str) -> str | None:
    """The graph node of a dotted module name, or None outside the project."""
    parts = module.split(".")
    if parts[0] not in PACKAGES:
        return None
    if parts[0] in SPLIT and len(parts) > 1:
        return f"{parts[0]}.{parts[1]}"
    return parts[0]


def edges() -> dict[str, set[str]]:
    """Node -> the nodes it imports."""
    graph: dict[str, set[str]] = defaultdict(set)
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            dotted = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            source = node(dotted.removesuffix(".__init__"))
            if source is None:
                continue
            for item in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names: list[str] = []
                if isinstance(item, ast.Import):
                    names = [a.name for a in item.names]
                elif isinstance(item, ast.ImportFrom) and item.module and item.level == 0:
                    names = [f"{item.module}.{a.name}" for a in item.names]
                for name in names:
                    target = node(name)
                    if target == "evalhouse.__version__":
                        target = "evalhouse"
                    if target is not None and target != source:
                        graph[source].add(target)
    return graph


def mermaid() -> str:
    """The graph as a Mermaid flowchart."""
    graph = edges()
    lines = ["flowchart TD"]
    for source in sorted(graph):
        for target in sorted(graph[source]):
            lines.append(f"    {source.replace('.', '_')}[{source}] --> {target.replace('.', '_')}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(mermaid())
