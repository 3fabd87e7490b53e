"""Ray benchmark: one local-default run on a local Ray with 2 workers vs in one process.

The test set is the demo's recorded answers (330 per week, weeks 1-4) repeated with new
ids up to ``--samples`` (default 20,000, a nightly run's size; a run of that size takes hours
on a busy shared 2-core machine, so say which count you ran). Scoring is the real local
default: local embedder, local judge. Both runs score the same samples into fresh homes.

Figures:
* wall time of each run and the ratio one-process / Ray (on 2 cores, expect about 1x:
  both use the same two cores);
* CPU seconds per sample of the one-process run (this process's own CPU time), the
  measured per-sample cost;
* the driver's CPU seconds per shard of the Ray run (the driver is this process; its
  tasks run elsewhere), what bounds how many workers one driver can keep busy. It includes
  the driver's one-time setup (it loads the embedder for the run record, connects to Ray),
  so on a short run it overstates the cost per shard and understates the ceiling;
* on paper, the time N machines of C cores would take: samples x CPU per sample / (N x C),
  plus Ray's start, as long as the driver keeps up (shards per second it can settle).

Run: ``.venv/bin/python -m tests.bench.ray_run [--samples N] [--concurrency N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import tempfile
import time
from pathlib import Path

from engine.demo import build_weekly_test_sets
from engine.models import RunConfig
from engine.run import loop as run_loop
from engine.run.distributed import RayPool, shard_size
from engine.runner import run_evaluation
from engine.settings import resolve_paths
from engine.testsets import load_test_set


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def write_test_set(folder: Path, samples: int) -> Path:
    """``samples`` demo cases with recorded answers, ids made unique by a round suffix."""
    lines: list[str] = []
    for _, path, _ in build_weekly_test_sets(folder / "weeks", weeks=4):
        lines.extend(path.read_text(encoding="utf-8").splitlines())
    out = folder / f"demo-{samples}.jsonl"
    with open(out, "w", encoding="utf-8") as handle:
        for n in range(samples):
            case = json.loads(lines[n % len(lines)])
            case["id"] = f"{case['id']}-w{n // 330 % 4 + 1}-r{n // len(lines)}"
            handle.write(json.dumps(case) + "\n")
    return out


def timed_run(config: RunConfig, home: Path, test_set_path: Path) -> tuple[float, float, int]:
    """(wall seconds, this process's CPU seconds, samples) of one run."""
    test_set = load_test_set(test_set_path)
    cpu, started = _cpu_seconds(), time.perf_counter()
    outcome = run_evaluation(config, resolve_paths(home), test_set=test_set)
    wall = time.perf_counter() - started
    assert outcome.status == "completed" and outcome.errors == 0, outcome
    return wall, _cpu_seconds() - cpu, outcome.samples


def main() -> None:
    """Run both, print the figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--concurrency", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="evalhouse-ray-bench-") as tmp:
        folder = Path(tmp)
        test_set = write_test_set(folder, args.samples)
        base = {"test_set": str(test_set), "concurrency": args.concurrency}
        load = os.getloadavg()[0]
        one_wall, one_cpu, n = timed_run(RunConfig(name="one", **base), folder / "one", test_set)
        print(f"one process: {n} samples in {one_wall:.1f} s ({n / one_wall:.1f} samples/s), "
              f"{one_cpu / n * 1000:.1f} ms CPU per sample")  # fmt: skip
        started = time.perf_counter()
        pool = RayPool.start(None)  # the runner reuses it: startup is timed on its own
        startup = time.perf_counter() - started
        slots = pool.slots
        try:
            ray_config = RunConfig(name="ray", executor="ray", **base)
            ray_wall, driver_cpu, _ = timed_run(ray_config, folder / "ray", test_set)
        finally:
            pool.close()
        size = shard_size(n, slots, run_loop.FLUSH_EVERY)
        shards = -(-n // size)
        print(f"local Ray, {slots} workers: started in {startup:.1f} s; {n} samples in "
              f"{ray_wall:.1f} s ({n / ray_wall:.1f} samples/s), {shards} shards of {size}, "
              f"driver {driver_cpu:.1f} s CPU = {driver_cpu / shards * 1000:.1f} ms per shard "
              "(its one-time setup included)")  # fmt: skip
        print(f"one process / Ray: {one_wall / ray_wall:.2f}x "
              f"(load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end, "
              f"on {os.cpu_count()} cores shared with other work)")  # fmt: skip
        per_sample = one_cpu / n
        per_shard = driver_cpu / shards
        ceiling = size / per_shard if per_shard > 0 else float("inf")
        print(f"on paper, 100,000 samples at {per_sample * 1000:.1f} ms CPU each "
              f"(driver settles at most {ceiling:,.0f} samples/s):")  # fmt: skip
        for machines in (1, 2, 4, 8, 16):
            cores = machines * 8
            rate = min(cores / per_sample, ceiling)
            print(f"  {machines:>2} machines x 8 cores: {100_000 / rate / 60:6.1f} min "
                  f"+ {startup:.0f} s Ray start")  # fmt: skip


if __name__ == "__main__":
    main()
