"""Warm CPU per sample of this tree against another, alternated on one shared home.

A busy shared machine moves CPU time per sample by ±10% from one minute to the next, more
than the changes being measured, so the two trees take turns: one cold run fills a home's
caches (embeddings, verifier pairs, judge answers), then each round starts a process per
tree in alternating order that scores the same cases warm against that home. A process
first runs once untimed-for-the-ratio (its lazy imports and loads; printed as the first run
in a fresh process, what a CLI warm run pays), then ``--repeat`` timed warm runs. Figures
are medians over rounds of each process's median; equal digests mean the same scores.

Run: ``.venv/bin/python -m tests.bench.warm_ab --baseline DIR [--tree DIR2] [--samples 300]
[--rounds 4] [--repeat 3]``; ``DIR`` is another tree's root (``git worktree add --detach
DIR COMMIT``), ``--tree`` measures a third tree in place of this one; without
``--baseline`` a tree runs against itself, and the ratio shows the method's noise.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve()


def _local_speed() -> ModuleType:
    """local_speed (cases, digest, CPU clock), through warm_profile's loader: the child runs
    with another tree first on its path, whose ``tests`` may lack these files."""
    spec = importlib.util.spec_from_file_location("_warm_profile", HERE.parent / "warm_profile.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    speed: ModuleType = module._local_speed()
    return speed


def child(home: Path, cases: Path, repeat: int) -> dict[str, Any]:
    """One process: a first warm run, then ``repeat`` timed ones (CPU-ms per sample)."""
    from engine.models import RunConfig
    from engine.runner import run_evaluation
    from engine.settings import resolve_paths
    from engine.testsets import load_test_set

    speed = _local_speed()
    options = {"workers": 1} if "workers" in RunConfig.model_fields else {}
    test_set = load_test_set(cases)
    paths = resolve_paths(home)
    timed: list[float] = []
    done: Any = None
    for _ in range(repeat + 1):
        config = RunConfig(
            name="bench-warm", test_set=str(cases), max_failed_fraction=1.0, **options
        )
        cpu = speed._cpu()
        done = run_evaluation(config, paths, test_set=test_set)
        timed.append(1000 * (speed._cpu() - cpu) / done.samples)
    return {
        "first": round(timed[0], 2),
        "warm": round(statistics.median(timed[1:]), 2) if repeat else None,
        "digest": speed._digest(paths.lake, done.run_id),
    }


def _run(tree: Path, home: Path, cases: Path, repeat: int) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(HERE), "--child", str(home), str(cases), "--repeat", str(repeat)],
        env={**os.environ, "PYTHONPATH": str(tree)},
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    """Alternate this tree and ``--baseline`` on one warm home; print the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=False)
    parser.add_argument("--tree", type=Path, default=HERE.parents[2], help="instead of this one")
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", type=Path, nargs=2, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--cases", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(*args.child, args.repeat)))
        return
    if args.cases is not None:
        print(json.dumps(str(_local_speed()._cases(args.cases, args.samples))))
        return
    # without a baseline the tree runs against itself: the ratio is the method's noise
    trees = {"this": args.tree.resolve(), "baseline": (args.baseline or args.tree).resolve()}
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        # the older tree writes the cases: a newer one reads its fields, not the reverse
        made = subprocess.run(
            [sys.executable, str(HERE), "--cases", tmp, "--samples", str(args.samples)],
            env={**os.environ, "PYTHONPATH": str(trees["baseline"])},
            cwd=trees["baseline"],
            capture_output=True,
            text=True,
            check=True,
        )
        cases = Path(json.loads(made.stdout.strip().splitlines()[-1]))
        home = Path(tmp) / "home"
        _run(trees["this"], home, cases, 0)  # the cold run that fills the caches
        got: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
        for k in range(args.rounds):
            for name in list(trees) if k % 2 == 0 else list(reversed(trees)):
                got[name].append(_run(trees[name], home, cases, args.repeat))
                g = got[name][-1]
                print(f"{name} round {k + 1}: first {g['first']}, warm {g['warm']} CPU-ms/sample")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    med = {n: {p: statistics.median(g[p] for g in got[n]) for p in ("first", "warm")} for n in got}
    for phase in ("warm", "first"):
        ratio = med["this"][phase] / med["baseline"][phase]
        print(
            f"{phase}: this / baseline CPU-ms per sample = {ratio:.3f} "
            f"({med['this'][phase]:.2f} vs {med['baseline'][phase]:.2f})"
        )
    digests = {g["digest"] for runs in got.values() for g in runs}
    print(f"scored rows identical across trees: {len(digests) == 1}")


if __name__ == "__main__":
    main()
