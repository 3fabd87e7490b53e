"""Answer-vs-reference quality on TruthfulQA (human-labelled; Apache-2.0; read from
``../shared/benchmarks/truthfulqa``): how well the local judge's RAG correctness separates
correct from incorrect answers, as AUROC, next to the floor of plain cosine similarity.

    python -m tests.bench.truthfulqa [--items 3000]

The floor in ``../shared/benchmarks/README.md``: AUROC 0.547 for cosine(response, reference)
with the same model on the first 3,000 items. Before the learned combiners the local judge
scored 0.591 here (commit daa8a8b). The correctness combiner is trained on these 3,000 items
by ``tests/bench/train_judge.py``: the figure to quote is its question-grouped held-out
AUROC, printed first; the shipped judge's AUROC on the same items is in-sample.

Incorrect answers there are often one-fact edits of the reference, which is what the judge's
contradiction rules are for.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt

from engine.judges.local.judge import LocalJudge
from tests.bench.judge_quality import cached_embedder, confusion

DATA = Path(__file__).resolve().parents[3] / "shared" / "benchmarks" / "truthfulqa" / "items.jsonl"


def auroc(scores: npt.ArrayLike, positive: npt.NDArray[np.bool_]) -> float:
    """Area under the ROC curve (Mann-Whitney U with average ranks for ties)."""
    values = np.asarray(scores, dtype=float)
    order = values.argsort(kind="mergesort")
    ranks = np.empty(len(values))
    sorted_values = values[order]
    i = 0
    while i < len(values):
        k = i
        while k + 1 < len(values) and sorted_values[k + 1] == sorted_values[i]:
            k += 1
        ranks[order[i : k + 1]] = (i + k) / 2 + 1
        i = k + 1
    n_pos = int(positive.sum())
    n_neg = len(values) - n_pos
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def main() -> None:
    """Score every item and print AUROCs, a confusion matrix and the throughput."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=3000)
    args = parser.parse_args()
    if not DATA.exists():
        print(f"skipped: {DATA} is missing")
        return
    with DATA.open(encoding="utf-8") as handle:
        items = [json.loads(line) for line in handle][: args.items]
    from tests.bench.train_judge import crossvalidate_correctness

    print("-- held out")
    crossvalidate_correctness(limit=args.items)
    print("-- the shipped judge (in-sample: its correctness combiner was fitted on these items)")
    embedder = cached_embedder()
    judge = LocalJudge(embedder)
    print(f"judge: {judge.prompt_version}")

    async def score_all() -> list[tuple[float, float]]:
        out = []
        for item in items:
            correctness = await judge.score_correctness(
                item["question"], item["response"], item["reference"]
            )
            vectors = embedder.embed([item["response"], item["reference"]])
            out.append((correctness.score, float(vectors[0] @ vectors[1])))
        return out

    started = time.perf_counter()
    scored = asyncio.run(score_all())
    elapsed = time.perf_counter() - started
    positive = np.array([item["label"] == "correct" for item in items])
    correctness = np.array([s[0] for s in scored])
    print(f"items: {len(items)} ({int(positive.sum())} correct), scored in {elapsed:.1f} s")
    print(f"throughput: {len(items) / elapsed:.1f} answers/s (embeddings from the bench cache)")
    print(f"AUROC, local judge RAG correctness (in-sample): {auroc(correctness, positive):.3f}")
    print(f"AUROC, plain cosine (this run): {auroc([s[1] for s in scored], positive):.3f}")
    print("AUROC floor in ../shared/benchmarks/README.md: 0.547; before the combiner: 0.591")
    gold = ["correct" if p else "incorrect" for p in positive]
    # The midpoint of the 1-5 scale as the decision: what a dashboard tier would show.
    pred = ["correct" if c >= 3.0 else "incorrect" for c in correctness]
    accuracy = float(np.mean([g == p for g, p in zip(gold, pred, strict=True)]))
    print(f"correctness >= 3 as 'correct': accuracy {accuracy:.3f}")
    print(confusion(gold, pred, ["correct", "incorrect"], indent="    "))


if __name__ == "__main__":
    main()
