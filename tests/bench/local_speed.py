"""Local default speed (local judge, local embedder, real analyzer), cold and warm cache,
for ``--workers 1`` and ``--workers 2`` side by side, or side by side with another source
tree of evalhouse.

Cold: a fresh home (empty embedding cache). Warm: a second run, same home and cases, so
every vector comes from the on-disk cache. Each measurement runs in its own process (the
model and caches start empty), which prints wall time, CPU seconds (its own and its
worker processes'), CPU-ms per sample, the peak memory of the process and its workers
together (RSS, sampled every 50 ms) and a digest of every scored row (results without
timings, claims, verdicts, highlights, attributions): equal digests mean the two scored
exactly the same.

Goals (issue "local scoring on every core", this 2-core machine): ``--workers 2`` /
``--workers 1`` samples/s >= 1.7 cold and warm; peak memory of a 2-worker run <= 1.5 GB.

Run: ``.venv/bin/python -m tests.bench.local_speed [--samples N] [--workers 1 2]
[--baseline DIR] [--pairs K]``; ``--baseline DIR`` is another tree's root (e.g. ``git
archive main | tar -x -C DIR``), measured in alternating order with this one at the first
``--workers``, figures as ratios of medians.
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


class PeakMemory:
    """Peak RSS of this process and its children together, sampled in a thread."""

    def __init__(self, every_s: float = 0.05) -> None:
        import threading

        self.peak = 0
        self._every = every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        import psutil

        me = psutil.Process()
        while not self._stop.wait(self._every):
            total = 0
            for proc in (me, *me.children(recursive=True)):
                try:
                    total += proc.memory_info().rss
                except psutil.Error:
                    continue
            self.peak = max(self.peak, total)


def _cpu() -> float:
    """CPU seconds of this process and of its children that have ended."""
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def measure(samples: int, workers: int | None = None) -> dict[str, Any]:
    """Cold and warm runs of ``samples`` demo cases: wall, CPU seconds (workers included),
    samples/s, peak memory, digests."""
    from engine.models import RunConfig
    from engine.runner import run_evaluation
    from engine.settings import resolve_paths
    from engine.testsets import load_test_set

    out: dict[str, Any] = {"engine": str(Path(sys.modules["engine"].__file__ or "").parent)}
    with tempfile.TemporaryDirectory() as tmp:
        path = _cases(Path(tmp), samples)
        test_set = load_test_set(path)
        paths = resolve_paths(Path(tmp) / "home")
        options: dict[str, Any] = {} if workers is None else {"workers": workers}
        for phase in ("cold", "warm"):
            config = RunConfig(
                name=f"bench-{phase}", test_set=str(path), max_failed_fraction=1.0, **options
            )
            wall, cpu = time.perf_counter(), _cpu()
            with PeakMemory() as memory:
                done = run_evaluation(config, paths, test_set=test_set)
            wall, cpu = time.perf_counter() - wall, _cpu() - cpu
            out[phase] = {
                "wall_s": round(wall, 2),
                "cpu_s": round(cpu, 2),
                "cpu_ms_per_sample": round(1000 * cpu / max(1, done.samples), 1),
                "peak_mb": round(memory.peak / 2**20),
                "samples_per_s": round(done.samples / wall, 2),
                "errors": done.errors,
                "digest": _digest(paths.lake, done.run_id),
            }
    return out


def _child(tree: Path, samples: int, workers: int | None) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    extra = [] if workers is None else ["--child-workers", str(workers)]
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", str(samples), *extra],
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
            f"{m['cpu_s']:.1f} CPU-s, {m.get('cpu_ms_per_sample', '?')} CPU-ms/sample, "
            f"peak {m.get('peak_mb', '?')} MB, {m['errors']} errors, rows {m['digest']})",
            flush=True,
        )


def _median(runs: list[dict[str, Any]], phase: str, key: str) -> float:
    return float(statistics.median(g[phase][key] for g in runs))


def main() -> None:
    """Measure this tree at each ``--workers`` (and ``--baseline``), one figure a line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--baseline", type=Path, default=None)
    parser.add_argument("--pairs", type=int, default=1)
    parser.add_argument(
        "--baseline-workers",
        type=int,
        default=None,
        help="the baseline's --workers (default: its own default)",
    )
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--child-workers", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(measure(args.child, args.child_workers)))
        return
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    # (tree, workers) per label; an older tree knows no --workers and runs as it does
    setups: dict[str, tuple[Path, int | None]] = {
        f"this --workers {w}": (HERE, w) for w in args.workers
    }
    if args.baseline is not None:
        setups["baseline"] = (args.baseline.resolve(), args.baseline_workers)
    got: dict[str, list[dict[str, Any]]] = {name: [] for name in setups}
    for pair in range(args.pairs):
        order = list(setups) if pair % 2 == 0 else list(reversed(setups))
        for name in order:
            tree, workers = setups[name]
            got[name].append(_child(tree, args.samples, workers))
            _show(f"{name} (pair {pair + 1})", got[name][-1])
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    first = f"this --workers {args.workers[0]}"
    for name in setups:
        if name == first:
            continue
        for phase in ("cold", "warm"):
            now = _median(got[name], phase, "samples_per_s")
            ref = _median(got[first], phase, "samples_per_s")
            cpu = _median(got[name], phase, "cpu_s") / _median(got[first], phase, "cpu_s")
            print(
                f"{phase}: {name} / {first} samples/s = {now / ref:.2f} ({now:.1f} vs "
                f"{ref:.1f}); CPU-s ratio {cpu:.2f}"
            )
    digests = {g[p]["digest"] for runs in got.values() for g in runs for p in ("cold", "warm")}
    print(f"scored rows identical across setups, cold and warm: {len(digests) == 1}")


if __name__ == "__main__":
    main()
