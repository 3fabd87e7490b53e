"""Benchmark of the retrieval scorer: its time per 1,000 samples as a ratio to the response
analyzer's on the same number of samples (goal <= 0.05), and its values side by side with a
plain reference written from the formulas in numpy (goal: equal to 1e-12).

The analyzer runs with the keyword embedder (pure CPU, no model): the cheapest analyzer
there is, so the ratio is the strictest one. Rankings are matched by id (10 retrieved of a
pool of 40, 1-4 relevant) and by equal texts (the text fallback without the embedder).

Run: ``.venv/bin/python -m tests.bench.retrieval [--samples N]``
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Sequence

import numpy as np

from engine.embedders.keyword import KeywordEmbedder
from engine.models import AnalyzerConfig, SampleKey, TestCase
from engine.scorers.base import SampleInput
from engine.scorers.retrieval import RetrievalScorer
from engine.scoring.analyzer import ResponseAnalyzer
from tests.bench.analyzer import synthetic_cases

KS = (1, 3, 5, 10)


def reference_metrics(
    retrieved: Sequence[str], relevant: Sequence[str], ks: Sequence[int]
) -> dict[str, float]:
    """The metrics straight from their textbook formulas in numpy: a 0/1 gain vector over
    the ranking (a repeated id gains once), discounts 1/log2(rank + 1)."""
    wanted = list(dict.fromkeys(relevant))
    if not wanted:
        return {}
    seen: set[str] = set()
    gains = np.zeros(len(retrieved))
    for i, doc in enumerate(retrieved):
        if doc in wanted and doc not in seen:
            gains[i] = 1.0
        seen.add(doc)
    hits = np.flatnonzero(gains)
    out = {"mrr": float(1.0 / (hits[0] + 1)) if hits.size else 0.0}
    for k in ks:
        top = gains[:k]
        discounts = 1.0 / np.log2(np.arange(2, k + 2))
        ideal = discounts[: min(len(wanted), k)].sum()
        out[f"hit@{k}"] = float(top.any())
        out[f"precision@{k}"] = float(top.sum() / k)
        out[f"recall@{k}"] = float(top.sum() / len(wanted))
        out[f"ndcg@{k}"] = float((top * discounts[: top.size]).sum() / ideal)
    return out


def retrieval_cases(n: int, seed: int = 11) -> list[TestCase]:
    """``n`` cases, half ranked by id and half by equal texts."""
    rng = random.Random(seed)
    pool = [f"doc-{i}" for i in range(40)]
    cases = []
    for i in range(n):
        retrieved = rng.sample(pool, 10)
        relevant = rng.sample(pool, rng.randint(1, 4))
        if i % 2:
            fields = {"retrieved_context_ids": retrieved, "relevant_context_ids": relevant}
        else:
            fields = {
                "context": [f"Passage {d} says something." for d in retrieved],
                "ground_truth": [
                    {"chunk_id": d, "text": f"passage {d}  says something."} for d in relevant
                ],
            }
        cases.append(TestCase.model_validate({"id": f"c{i}", "query": "q?", **fields}))
    return cases


def _time_scorer(cases: list[TestCase]) -> tuple[float, list[dict[str, float]]]:
    scorer = RetrievalScorer(KS, None, 0.85)
    samples = [
        SampleInput(SampleKey(run_id="b", iteration=1, sample_id=c.id), c, "answer") for c in cases
    ]
    start = time.perf_counter()
    rows = [scorer.rows(s) for s in samples]
    elapsed = time.perf_counter() - start
    values = [{r.metric: r.value for r in sample if ":" not in r.metric} for sample in rows]
    return elapsed, values  # type: ignore[return-value]


def _reference(cases: list[TestCase]) -> tuple[float, list[dict[str, float]]]:
    start = time.perf_counter()
    out = []
    for case in cases:
        if case.retrieved_context_ids is not None:
            out.append(reference_metrics(case.retrieved_context_ids, case.relevant_context_ids, KS))
        else:
            ids = [c.split()[1] for c in case.context or ()]
            out.append(reference_metrics(ids, [g.chunk_id for g in case.ground_truth], KS))
    return time.perf_counter() - start, out


def main() -> None:
    """Run the benchmark and print one figure per line."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=1000)
    args = parser.parse_args()
    cases = retrieval_cases(args.samples)
    ours, values = _time_scorer(cases)
    plain, expected = _reference(cases)
    worst = max(abs(v[m] - e[m]) for v, e in zip(values, expected, strict=True) for m in e)
    analyzer = ResponseAnalyzer(KeywordEmbedder(), AnalyzerConfig())
    items = synthetic_cases(args.samples)
    start = time.perf_counter()
    for at in range(0, len(items), 100):
        analyzer.analyze_batch(items[at : at + 100])
    analyzed = time.perf_counter() - start
    per_k = 1000 / args.samples
    print(f"samples: {args.samples} (half by id, half by equal text), k = {KS}")
    print(f"retrieval scorer: {ours * per_k * 1000:.1f} ms per 1,000 samples")
    print(f"numpy reference:  {plain * per_k * 1000:.1f} ms per 1,000 samples")
    print(f"analyzer (keyword embedder): {analyzed * per_k:.2f} s per 1,000 samples")
    ratio = ours / analyzed
    print(
        f"retrieval / analyzer: {ratio:.4f} (goal <= 0.05): {'ok' if ratio <= 0.05 else 'MISSED'}"
    )
    agree = worst <= 1e-12
    print(f"largest difference from the reference: {worst:.2e} (goal <= 1e-12): "
          f"{'ok' if agree else 'MISSED'}")  # fmt: skip
    for metric in ("mrr", "hit@5", "ndcg@5", "precision@5", "recall@10"):
        mine = np.mean([v[metric] for v in values])
        theirs = np.mean([e[metric] for e in expected])
        print(f"  mean {metric:<12} scorer {mine:.6f}   reference {theirs:.6f}")
    if ratio > 0.05 or not agree:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
