"""Where the warm local scoring path spends its CPU, function by function, for this tree
or another one (an older release checked out elsewhere).

One process per tree: a cold run fills a fresh home's caches, a warm run (the same cases
again, every vector and verdict from the cache) is timed ``--repeat`` times without the
profiler (CPU-ms per sample from ``getrusage``, the median is the figure to compare), then
one more warm run is profiled.
The profiler's clock is each thread's own CPU time, with one profiler per thread, so the
table adds the event loop's thread and the scoring threads without counting one thread's
time twice or counting time spent waiting. Figures are CPU-ms per sample; the digest of
the scored rows is local_speed's (equal digests: the same scores).

Run: ``.venv/bin/python -m tests.bench.warm_profile [--samples 300] [--tree DIR]
[--top 30] [--dump FILE] [--repeat 5]``; ``--tree DIR`` measures that tree's ``engine`` with this
script (``git worktree add --detach DIR COMMIT``). ``--diff OLD NEW`` compares two dumps
(``--samples`` as they were measured).
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve()


def _local_speed() -> ModuleType:
    """local_speed loaded from this file's folder, whatever tree ``engine`` comes from
    (the cases and the digest have one home there)."""
    spec = importlib.util.spec_from_file_location("_local_speed", HERE.parent / "local_speed.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class ThreadProfiles:
    """One cProfile per thread (its own CPU clock) for the threads started inside."""

    def __init__(self) -> None:
        self.profiles: list[cProfile.Profile] = []
        self._lock = threading.Lock()

    def _start(self) -> None:
        profile = cProfile.Profile(time.thread_time)
        with self._lock:
            self.profiles.append(profile)
        profile.enable()

    def _hook(self, *_: object) -> None:
        # the first event in a new thread swaps this hook for the thread's own profiler
        sys.setprofile(None)
        self._start()

    def __enter__(self) -> ThreadProfiles:
        threading.setprofile(self._hook)
        self._start()
        return self

    def __exit__(self, *exc: object) -> None:
        threading.setprofile(None)  # type: ignore[arg-type]
        self.profiles[0].disable()

    def stats(self) -> pstats.Stats:
        """The threads' profiles added together."""
        return pstats.Stats(*self.profiles)


def _where(file: str, name: str) -> str:
    """A function's name without its tree or line (so two trees' copies match): the path
    from ``engine/`` (or the last two parts) and the name."""
    parts = Path(file).parts
    tail = parts[parts.index("engine") :] if "engine" in parts else parts[-2:]
    return f"{'/'.join(tail) or file}:{name}"


def _table(stats: pstats.Stats, samples: int) -> dict[str, dict[str, float]]:
    """Per function: calls, own and cumulative CPU-ms, each per sample."""
    table: dict[tuple[str, int, str], tuple[Any, ...]] = stats.stats  # type: ignore[attr-defined]
    out: dict[str, dict[str, float]] = {}
    for (file, _line, name), (_cc, calls, tottime, cumtime, _callers) in table.items():
        row = out.setdefault(_where(file, name), {"calls": 0.0, "own_ms": 0.0, "cum_ms": 0.0})
        row["calls"] += calls / samples
        row["own_ms"] += 1000 * tottime / samples
        row["cum_ms"] += 1000 * cumtime / samples
    return out


def _rows(stats: pstats.Stats, samples: int, top: int) -> list[dict[str, Any]]:
    table = _table(stats, samples)
    rows = [{"function": k, **{m: round(v, 3) for m, v in r.items()}} for k, r in table.items()]
    rows.sort(key=lambda r: -float(r["own_ms"]))
    return rows[:top]


def diff(old: Path, new: Path, samples: int, top: int) -> None:
    """Print the functions whose own CPU-ms per sample changed most between two dumps."""
    before = _table(pstats.Stats(str(old)), samples)
    after = _table(pstats.Stats(str(new)), samples)
    total = [sum(r["own_ms"] for r in t.values()) for t in (before, after)]
    print(f"profiled own CPU-ms per sample: {total[0]:.2f} -> {total[1]:.2f}")
    zero = {"calls": 0.0, "own_ms": 0.0, "cum_ms": 0.0}
    changes = sorted(
        (
            (after.get(k, zero)["own_ms"] - before.get(k, zero)["own_ms"], k)
            for k in {*before, *after}
        ),
        key=lambda c: -abs(c[0]),
    )
    print(f"{'change':>8} {'before':>8} {'after':>8} {'calls b/a':>13}  function (own CPU-ms)")
    for change, key in changes[:top]:
        b, a = before.get(key, zero), after.get(key, zero)
        print(
            f"{change:+8.3f} {b['own_ms']:8.3f} {a['own_ms']:8.3f} "
            f"{b['calls']:6.1f}/{a['calls']:<6.1f}  {key}"
        )


def measure(samples: int, top: int, dump: str | None, repeat: int) -> dict[str, Any]:
    """Cold run, ``repeat`` timed warm runs, a profiled warm run of ``samples`` demo cases."""
    from engine.models import RunConfig
    from engine.runner import run_evaluation
    from engine.settings import resolve_paths
    from engine.testsets import load_test_set

    speed = _local_speed()
    # one process scores (an older tree has no workers option and always did)
    options = {"workers": 1} if "workers" in RunConfig.model_fields else {}
    out: dict[str, Any] = {"engine": str(Path(sys.modules["engine"].__file__ or "").parent)}
    with tempfile.TemporaryDirectory() as tmp:
        path = speed._cases(Path(tmp), samples)
        test_set = load_test_set(path)
        paths = resolve_paths(Path(tmp) / "home")

        def run(phase: str) -> Any:
            config = RunConfig(
                name=f"bench-{phase}", test_set=str(path), max_failed_fraction=1.0, **options
            )
            return run_evaluation(config, paths, test_set=test_set)

        run("cold")
        timed = []
        for _ in range(repeat):
            cpu = speed._cpu()
            done = run("warm")
            timed.append(1000 * (speed._cpu() - cpu) / done.samples)
        out["warm_cpu_ms_per_sample"] = [round(x, 2) for x in timed]
        out["digest"] = speed._digest(paths.lake, done.run_id)
        with ThreadProfiles() as profiles:
            again = run("warm-profiled")
        stats = profiles.stats()
        if dump:
            stats.dump_stats(dump)
        out["profiled_digest"] = speed._digest(paths.lake, again.run_id)
        out["profiled_threads"] = len(profiles.profiles)
        out["top"] = _rows(stats, again.samples, top)
    return out


def main() -> None:
    """Profile this tree's (or ``--tree``'s) warm path; print the top functions."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--tree", type=Path, default=None)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--dump", default=None, help="write the pstats file here")
    parser.add_argument("--repeat", type=int, default=5, help="timed warm runs (median)")
    parser.add_argument("--diff", type=Path, nargs=2, metavar=("OLD", "NEW"), default=None)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.diff is not None:
        diff(*args.diff, args.samples, args.top)
        return
    if args.child:
        print(json.dumps(measure(args.samples, args.top, args.dump, args.repeat)))
        return
    tree = (args.tree or HERE.parents[2]).resolve()
    extra = ["--dump", str(Path(args.dump).resolve())] if args.dump else []
    command = [sys.executable, str(HERE), "--child", "--samples", str(args.samples)]
    done = subprocess.run(
        [*command, "--top", str(args.top), "--repeat", str(args.repeat), *extra],
        env={**os.environ, "PYTHONPATH": str(tree)},
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    got = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"engine: {got['engine']}")
    timed = got["warm_cpu_ms_per_sample"]
    print(
        f"warm CPU-ms per sample (unprofiled, median of {len(timed)}): "
        f"{statistics.median(timed):.2f} {timed}; rows "
        f"{got['digest']} (profiled run {got['profiled_digest']}, "
        f"{got['profiled_threads']} threads)"
    )
    print(f"{'own ms':>8} {'cum ms':>8} {'calls':>8}  function (per sample)")
    for row in got["top"]:
        print(f"{row['own_ms']:8.3f} {row['cum_ms']:8.3f} {row['calls']:8.2f}  {row['function']}")


if __name__ == "__main__":
    main()
