"""Local default speed (local judge, local embedder, real analyzer), cold and warm cache,
of this tree, or side by side with another source tree of evalhouse.

Cold: a fresh home (empty embedding cache). Warm: a second run, same home and cases, so
every vector comes from the on-disk cache. Each measurement runs in its own process (the
model and caches start empty), which prints wall time, CPU seconds and a digest of every
scored row (results without timings, claims, verdicts, highlights, attributions): equal
digests mean the two trees scored exactly the same.

Run: ``.venv/bin/python -m tests.bench.local_speed [--samples N] [--baseline DIR]
[--pairs K]``; ``--baseline DIR`` is another tree's root (e.g. ``git archive main | tar -x
-C DIR``), measured in alternating order with this one, figures as ratios of medians.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[2]
_TIMINGS = {"run_id", "scored_at", "scoring_ms", "latency_ms"}
_TABLES = ("results", "claims", "verdicts", "highlights", "attributions")


def _cases(folder: Path, samples: int) -> Path:
    """``samples`` cases of the four demo weeks (ids made unique), repeated if needed."""
    from engine.demo import build_weekly_test_sets

    lines: list[str] = []
    for week, (_, path, _) in enumerate(build_weekly_test_sets(folder / "weeks", weeks=4)):
        for line in path.read_text(encoding="utf-8").splitlines():
            case = json.loads(line)
            case["id"] = f"w{week + 1}-{case['id']}"
            lines.append(json.dumps(case))
    rounds = math.ceil(samples / len(lines))
    lines = [
        json.dumps({**json.loads(x), "id": f"r{r}-{json.loads(x)['id']}"}) if r else x
        for r in range(rounds)
        for x in lines
    ]
    out = folder / "cases.jsonl"
    out.write_text("\n".join(lines[:samples]) + "\n", encoding="utf-8")
    return out


def _json(row: dict[str, Any]) -> str:
    return json.dumps(row, sort_keys=True, default=str)


def _digest(lake: Path, run_id: str) -> str:
    from engine.lake import read_table

    hasher = hashlib.sha256()
    for table in _TABLES:
        rows = [
            _json({k: v for k, v in r.items() if k not in _TIMINGS})
            for r in read_table(lake, table, run_id).to_pylist()
        ]
        for row in sorted(rows):
            hasher.update(row.encode())
    return hasher.hexdigest()[:16]


def measure(samples: int) -> dict[str, Any]:
    """Cold and warm runs of ``samples`` demo cases: wall, CPU seconds, samples/s, digests."""
    from engine.models import RunConfig
    from engine.runner import run_evaluation
    from engine.settings import resolve_paths
    from engine.testsets import load_test_set

    out: dict[str, Any] = {"engine": str(Path(sys.modules["engine"].__file__ or "").parent)}
    with tempfile.TemporaryDirectory() as tmp:
        path = _cases(Path(tmp), samples)
        test_set = load_test_set(path)
        paths = resolve_paths(Path(tmp) / "home")
        for phase in ("cold", "warm"):
            config = RunConfig(name=f"bench-{phase}", test_set=str(path), max_failed_fraction=1.0)
            wall, cpu = time.perf_counter(), time.process_time()
            done = run_evaluation(config, paths, test_set=test_set)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            out[phase] = {
                "wall_s": round(wall, 2),
                "cpu_s": round(cpu, 2),
                "samples_per_s": round(done.samples / wall, 2),
                "errors": done.errors,
                "digest": _digest(paths.lake, done.run_id),
            }
    return out


def _child(tree: Path, samples: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", str(samples)],
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _show(label: str, got: dict[str, Any]) -> None:
    for phase in ("cold", "warm"):
        m = got[phase]
        print(
            f"{label} {phase}: {m['samples_per_s']:.1f} samples/s ({m['wall_s']:.1f} s wall, "
            f"{m['cpu_s']:.1f} CPU-s, {m['errors']} errors, rows {m['digest']})",
            flush=True,
        )


def main() -> None:
    """Measure this tree (and ``--baseline``), print one figure a line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--baseline", type=Path, default=None)
    parser.add_argument("--pairs", type=int, default=1)
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(measure(args.child)))
        return
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    trees = {"this": HERE}
    if args.baseline is not None:
        trees["baseline"] = args.baseline.resolve()
    got: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    for pair in range(args.pairs):
        order = list(trees) if pair % 2 else list(reversed(trees))
        for name in order:
            got[name].append(_child(trees[name], args.samples))
            _show(f"{name} (pair {pair + 1})", got[name][-1])
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    if "baseline" not in got:
        return
    for phase in ("cold", "warm"):
        now = statistics.median(g[phase]["samples_per_s"] for g in got["this"])
        before = statistics.median(g[phase]["samples_per_s"] for g in got["baseline"])
        cpu_now = statistics.median(g[phase]["cpu_s"] for g in got["this"])
        cpu_before = statistics.median(g[phase]["cpu_s"] for g in got["baseline"])
        print(
            f"{phase}: this / baseline samples/s = {now / before:.2f} ({now:.1f} vs "
            f"{before:.1f}); CPU-s ratio {cpu_now / cpu_before:.2f}"
        )
    digests = {g[p]["digest"] for runs in got.values() for g in runs for p in ("cold", "warm")}
    print(f"scored rows identical across trees, cold and warm: {len(digests) == 1}")


if __name__ == "__main__":
    main()
