"""The dependency direction of DESIGN.md, checked by reading imports."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYERS = {"engine", "ingest", "warehouse", "dashboard", "evalhouse"}
ALLOWED = {
    "engine": set(),
    "warehouse": {"engine"},
    "ingest": {"warehouse", "engine"},
    "dashboard": {"warehouse", "engine"},
    "evalhouse": {"engine", "ingest", "warehouse", "dashboard"},
}
HTTP_CLIENTS = {"aiohttp", "httpx", "requests", "urllib3"}
"""HTTP client libraries: only engine/http.py, the one send-with-retries every provider
(judges, embedders, targets) shares, imports one."""


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_layers_import_only_what_design_allows() -> None:
    problems = []
    for layer, allowed in ALLOWED.items():
        for path in (ROOT / layer).rglob("*.py"):
            bad = (_imports(path) & LAYERS) - allowed - {layer}
            if bad:
                problems.append(f"{path.relative_to(ROOT)} imports {sorted(bad)}")
    assert problems == []


def test_only_warehouse_imports_duckdb_and_engine_no_streamlit() -> None:
    problems = []
    for layer in LAYERS - {"warehouse"}:
        for path in (ROOT / layer).rglob("*.py"):
            names = _imports(path)
            if "duckdb" in names:
                problems.append(f"{path.relative_to(ROOT)} imports duckdb")
            if layer == "engine" and "streamlit" in names:
                problems.append(f"{path.relative_to(ROOT)} imports streamlit")
    assert problems == []


def test_only_the_http_module_imports_an_http_client() -> None:
    offenders = [
        str(p.relative_to(ROOT))
        for layer in LAYERS
        for p in (ROOT / layer).rglob("*.py")
        if _imports(p) & HTTP_CLIENTS and p != ROOT / "engine" / "http.py"
    ]
    assert offenders == []


def test_nothing_imports_dashboard() -> None:
    offenders = [
        str(p.relative_to(ROOT))
        for layer in LAYERS - {"dashboard", "evalhouse"}
        for p in (ROOT / layer).rglob("*.py")
        if "dashboard" in _imports(p)
    ]
    assert offenders == []
