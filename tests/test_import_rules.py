"""The dependency direction of DESIGN.md, checked by reading imports.

Three rules: the five top-level layers import only what DESIGN.md allows; inside ``engine``
every module sits on a floor (``ENGINE_FLOORS``) and imports only from its own floor or
the floors below; and no two modules import each other, directly or around a circle.
Every import counts, wherever it is written: at the top, inside a function (a lazy import
is still a dependency) or under ``TYPE_CHECKING``. Each file is parsed once.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
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
"""HTTP client libraries: only engine/http/, the one send-with-retries every provider
(judges, embedders, targets) shares, imports one."""

ENGINE_FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "foundation",
        (
            "engine",
            "engine.errors",
            "engine.models",
            "engine.text",
            "engine.clock",
            "engine.columns",
            "engine.files",
            "engine.outputs",
            "engine.secrets",
            "engine.retry",
            "engine.settings",
            "engine.progress",
            "engine.cache_db",
            "engine.gate",
            "engine.gate_markdown",
            "engine.http",
            "engine.lake",
            "engine.ratings",
            "engine.stats",
            "engine.noise",
            "engine.reliability",
            "engine.pricing",
            "engine.processes",
            "engine.providers",
            "engine.onnx_cpu",
        ),
    ),
    (
        "contracts",
        (
            "engine.embedders",
            "engine.verifier",
            "engine.judges.base",
            "engine.judges.conversation",
        ),
    ),
    ("judges", ("engine.judges", "engine.verifier.decide")),
    ("scoring", ("engine.scoring", "engine.graders")),
    ("inputs", ("engine.testsets", "engine.candidates", "engine.targets")),
    ("scorers", ("engine.scorers",)),
    ("run", ("engine.run", "engine.testsets.build")),
    (
        "entry points",
        (
            "engine.runner",
            "engine.pairwise",
            "engine.preferences",
            "engine.alerts",
            "engine.webhooks",
            "engine.compare_runs",
            "engine.reanalysis",
            "engine.monitor",
            "engine.drift",
            "engine.demo",
            "engine.demo_run",
        ),
    ),
)
"""The floors inside ``engine``, lowest first; a module may import its own floor and the
ones below. A module belongs to the floor of the longest prefix that names it.

* foundation: the schema (``models``), errors, text helpers, the clock, the lake, the
  one HTTP send-with-retries, settings and secrets;
* contracts: the models a judge reads text with (the embedders, the cross-encoder
  verifier) and the judge protocols every judge implements;
* judges: the judges over HTTP (``judges/http``), the local judge (``judges/local``), the
  factory that picks one, and the verifier's sentence-level decisions (``verifier.decide``:
  they guard the model with the local judge's number rule);
* scoring: pure metrics over judge verdicts and embeddings, and the graders;
* inputs: test sets, candidates and targets (where cases and responses come from);
* scorers: one ``Scorer`` each, composing the floors below;
* run: the run (plan, lanes, pipeline, executors, loop) and the test-set builders that
  run scorers;
* entry points: what the command line calls."""


@dataclass(frozen=True)
class Source:
    """One parsed module."""

    name: str
    """Dotted module name (``engine.run.loop``; a package is its ``__init__``)."""
    path: Path
    tree: ast.Module


def module_name(path: Path, root: Path) -> str:
    """The dotted name of ``path`` under ``root``."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def parse_sources(root: Path, packages: Iterable[str]) -> dict[str, Source]:
    """Every module of ``packages`` under ``root``, parsed once."""
    out: dict[str, Source] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            name = module_name(path, root)
            out[name] = Source(name, path, ast.parse(path.read_text(encoding="utf-8")))
    return out


@cache
def _project() -> dict[str, Source]:
    return parse_sources(ROOT, sorted(LAYERS))


def _package(source: Source) -> list[str]:
    parts = source.name.split(".")
    return parts if source.path.name == "__init__.py" else parts[:-1]


def _absolute(source: Source, node: ast.ImportFrom) -> str:
    base = node.module or ""
    if node.level:
        package = _package(source)
        anchor = package[: len(package) - node.level + 1]
        base = ".".join([*anchor, *([base] if base else [])])
    return base


def _top_level(source: Source) -> set[str]:
    """The top-level packages the module imports (absolute imports only)."""
    names: set[str] = set()
    for node in ast.walk(source.tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def _longest_module(name: str, sources: Mapping[str, Source]) -> str | None:
    while name and name not in sources:
        name = name.rpartition(".")[0]
    return name or None


def import_graph(sources: Mapping[str, Source]) -> dict[str, set[str]]:
    """module -> the modules of ``sources`` it imports. ``import a.b`` and ``from a import
    b`` name module ``a.b`` when it exists, else the longest module ``a.b`` starts with
    (``from engine.models import RunConfig`` is ``engine.models``)."""
    graph: dict[str, set[str]] = {}
    for name, source in sources.items():
        named: list[str] = []
        for node in ast.walk(source.tree):
            if isinstance(node, ast.Import):
                named += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(source, node)
                named += [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in sources else base
                    for alias in node.names
                ]
        targets = {_longest_module(n, sources) for n in named}
        graph[name] = {t for t in targets if t is not None and t != name}
    return graph


def find_cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The import circles of ``graph``: its strongly connected components of more than one
    module (Tarjan's algorithm, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, list[str]]] = [(start, sorted(graph.get(start, ())))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, todo = work[-1]
            if todo:
                nxt = todo.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph.get(nxt, ()))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return sorted(cycles)


def floor_of(module: str) -> int | None:
    """The index in ``ENGINE_FLOORS`` of the floor ``module`` belongs to."""
    best: tuple[int, int] | None = None  # (prefix length, floor)
    for floor, (_, prefixes) in enumerate(ENGINE_FLOORS):
        for prefix in prefixes:
            names_it = module == prefix or (prefix != "engine" and module.startswith(prefix + "."))
            if names_it and (best is None or len(prefix) > best[0]):
                best = (len(prefix), floor)
    return None if best is None else best[1]


def floor_violations(graph: Mapping[str, set[str]]) -> list[str]:
    """Imports inside ``engine`` that run up a floor, and modules on no floor."""
    problems = []
    for module, targets in sorted(graph.items()):
        if module.split(".")[0] != "engine":
            continue
        here = floor_of(module)
        if here is None:
            problems.append(f"{module} is on no floor of ENGINE_FLOORS")
            continue
        for target in sorted(targets):
            there = floor_of(target) if target.split(".")[0] == "engine" else None
            if there is not None and there > here:
                problems.append(
                    f"{module} ({ENGINE_FLOORS[here][0]}) imports {target} "
                    f"({ENGINE_FLOORS[there][0]}, a higher floor)"
                )
    return problems


# --------------------------------------------------------------------------- the rules


def test_layers_import_only_what_design_allows() -> None:
    problems = []
    for source in _project().values():
        layer = source.name.split(".")[0]
        bad = (_top_level(source) & LAYERS) - ALLOWED[layer] - {layer}
        if bad:
            problems.append(f"{source.path.relative_to(ROOT)} imports {sorted(bad)}")
    assert problems == []


def test_only_warehouse_imports_duckdb_and_engine_no_streamlit() -> None:
    problems = []
    for source in _project().values():
        layer = source.name.split(".")[0]
        names = _top_level(source)
        if layer != "warehouse" and "duckdb" in names:
            problems.append(f"{source.path.relative_to(ROOT)} imports duckdb")
        if layer == "engine" and "streamlit" in names:
            problems.append(f"{source.path.relative_to(ROOT)} imports streamlit")
    assert problems == []


def test_only_the_http_module_imports_an_http_client() -> None:
    offenders = [
        str(source.path.relative_to(ROOT))
        for source in _project().values()
        if _top_level(source) & HTTP_CLIENTS
        and not source.path.is_relative_to(ROOT / "engine" / "http")
    ]
    assert offenders == []


def test_nothing_imports_dashboard() -> None:
    offenders = [
        str(source.path.relative_to(ROOT))
        for source in _project().values()
        if source.name.split(".")[0] not in {"dashboard", "evalhouse"}
        and "dashboard" in _top_level(source)
    ]
    assert offenders == []


def test_engine_imports_only_its_own_floor_and_below() -> None:
    assert floor_violations(import_graph(_project())) == []


def test_no_import_cycles() -> None:
    assert find_cycles(import_graph(_project())) == []


# --------------------------------------------------------------------------- the checker


def _write(root: Path, files: Mapping[str, str]) -> dict[str, Source]:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return parse_sources(root, ["engine"])


def test_a_two_module_cycle_is_found_even_through_a_lazy_import(tmp_path: Path) -> None:
    sources = _write(
        tmp_path,
        {
            "engine/__init__.py": "",
            "engine/run/__init__.py": "",
            "engine/run/loop.py": "from engine.run.distributed import RayShards\n",
            "engine/run/distributed.py": (
                "def score():\n    from engine.run import loop  # lazy\n    return loop\n"
            ),
            "engine/run/writer.py": "from . import loop\n",
        },
    )
    graph = import_graph(sources)
    assert graph["engine.run.writer"] == {"engine.run.loop"}
    assert find_cycles(graph) == [["engine.run.distributed", "engine.run.loop"]]


def test_a_cycle_under_type_checking_counts_and_a_package_init_is_not_one(
    tmp_path: Path,
) -> None:
    sources = _write(
        tmp_path,
        {
            "engine/__init__.py": "",
            "engine/judges/__init__.py": "from engine.judges.client import Client\n",
            "engine/judges/client.py": "from engine.judges import mixins\n",
            "engine/judges/mixins.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from engine.judges.client import Client\n"
            ),
        },
    )
    assert find_cycles(import_graph(sources)) == [["engine.judges.client", "engine.judges.mixins"]]


def test_an_import_up_a_floor_is_refused(tmp_path: Path) -> None:
    sources = _write(
        tmp_path,
        {
            "engine/__init__.py": "",
            "engine/scorers/__init__.py": "",
            "engine/scorers/graders.py": "from engine.run.plan import CandidatePlan\n",
            "engine/run/__init__.py": "",
            "engine/run/plan.py": "CandidatePlan = object\n",
            "engine/nowhere.py": "",
        },
    )
    assert floor_violations(import_graph(sources)) == [
        "engine.nowhere is on no floor of ENGINE_FLOORS",
        "engine.scorers.graders (scorers) imports engine.run.plan (run, a higher floor)",
    ]
