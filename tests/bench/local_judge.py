"""Local judge CPU on demo samples with every vector already embedded, alone or side by
side with another tree of evalhouse.

For each of ``--samples`` demo cases the judge extracts claims, scores the rubric against
the context, relevance, and correctness against the expected answer: what a local run asks
of it, minus the embedding model (vectors come from an embedding cache filled by a first
pass). Each measurement is its own process, best of three passes; ``--baseline DIR`` is
another tree's root, measured alternately with this one, ``--pairs`` times.

Run: ``.venv/bin/python -m tests.bench.local_judge [--samples 1000] [--baseline DIR]
[--pairs 5]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]


def measure(samples: int, cache: Path) -> float:
    """Best CPU-seconds of three judge passes over ``samples`` demo cases."""
    from engine.embedders.factory import build_embedder
    from engine.embedders.store import EmbeddingStore
    from engine.judges.local.judge import LocalJudge
    from engine.testsets import load_test_set
    from tests.bench.local_speed import _cases

    with tempfile.TemporaryDirectory() as tmp:
        cases = load_test_set(_cases(Path(tmp), samples)).cases

    def judge_all() -> float:
        judge = LocalJudge(EmbeddingStore(build_embedder("local", cache)))
        started = time.process_time()
        for case in cases:
            context = list(case.context or ()) or [chunk.text for chunk in case.ground_truth]
            answer = case.response or ""
            judge.claims(answer)
            judge.rubric(case.query, context, answer)
            judge.relevance(case.query, answer)
            judge.correctness_score(case.query, answer, case.expected_answer.text)
        return time.process_time() - started

    judge_all()  # fills the embedding cache
    return min(judge_all() for _ in range(3))


def _child(tree: Path, samples: int, cache: Path) -> float:
    done = subprocess.run(
        [sys.executable, "-m", "tests.bench.local_judge", "--child", str(samples), str(cache)],
        env={**os.environ, "PYTHONPATH": str(tree)},
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--baseline", type=Path, default=None)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--child", nargs=2, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(measure(int(args.child[0]), Path(args.child[1]))))
        return
    trees = {"this": HERE}
    if args.baseline is not None:
        trees["baseline"] = args.baseline.resolve()
    got: dict[str, list[float]] = {name: [] for name in trees}
    with tempfile.TemporaryDirectory() as cache:
        for pair in range(args.pairs if args.baseline is not None else 1):
            for name in list(trees) if pair % 2 else list(reversed(trees)):
                got[name].append(_child(trees[name], args.samples, Path(cache)))
                print(f"{name} (pair {pair + 1}): {got[name][-1]:.2f} CPU-s", flush=True)
    now = got["this"]
    per_sample = 1000 * min(now) / args.samples
    print(f"local judge, {args.samples} demo samples: {per_sample:.2f} CPU-ms a sample")
    if args.baseline is not None:
        before = got["baseline"]
        median = statistics.median(now) / statistics.median(before)
        print(
            f"this / baseline CPU: median {median:.2f}, "
            f"best {min(now) / min(before):.2f}; pairs where this took less: "
            f"{sum(a < b for a, b in zip(now, before, strict=True))} of {len(now)}"
        )


if __name__ == "__main__":
    main()
