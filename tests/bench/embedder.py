"""Local embedder: CPU of batching by token count against 48 texts a batch, and the
embedder's texts/s against the bare graph's.

The texts are those the analyzer embeds for the demo test sets (every sentence, clause,
word window, whole response, reference, claim and chunk: ``Plan.texts``), embedded in one
call and again in calls of one sample batch each (the run's pattern). ``LocalEmbedder``
pads each batch to its longest text; the figures compare batches of at most
``BATCH_TOKENS`` padded tokens (the default) with batches of 48 texts of similar token
count, and check that the vectors are bit-identical. One process, alternating order.

The limit: onnxruntime running the same graph on the same batches, already tokenised and
padded, with nothing around it (``InferenceSession.run`` alone, feeds built beforehand).
The embedder's texts/s (tokenising, padding, pooling, normalising included) over that
figure, at one thread (a worker of a 2-worker run) and two; goal >= 0.9.

Run: ``.venv/bin/python -m tests.bench.embedder [--rounds 2]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from engine.embedders.local import BATCH_TOKENS, LocalEmbedder
from engine.models import AnalyzerConfig
from engine.scoring.plan import plan_sample
from engine.testsets import load_test_set
from tests.bench.local_speed import _cases

UNBOUNDED = 10**9


def _sample_texts(samples: int, batch: int) -> list[list[str]]:
    """Texts per sample batch of ``samples`` demo cases, each text once in the run."""
    with tempfile.TemporaryDirectory() as tmp:
        cases = load_test_set(_cases(Path(tmp), samples)).cases
    config, seen, out = AnalyzerConfig(), set[str](), []
    for begin in range(0, len(cases), batch):
        texts: set[str] = set()
        for case in cases[begin : begin + batch]:
            texts |= plan_sample(case, case.response or "", config).texts()
        out.append(sorted(texts - seen))
        seen |= texts
    return out


def _cpu(embedder: LocalEmbedder, calls: list[list[str]]) -> tuple[float, np.ndarray]:
    started = time.process_time()
    vectors = np.concatenate([embedder.embed(texts) for texts in calls if texts])
    return time.process_time() - started, vectors


def _graph_limit(texts: list[str], threads: int, rounds: int) -> tuple[float, float]:
    """(texts/s of ``LocalEmbedder.embed``, texts/s of the bare session on its batches)."""
    embedder = LocalEmbedder(threads=threads)
    embedder.embed(["warm up the model"])
    tokens = [e.ids for e in embedder._tokenizer.encode_batch(texts)]
    feeds = []
    for rows in embedder._batches(tokens):
        batch = [tokens[i] for i in rows]
        width = max(map(len, batch))
        ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, text_ids in enumerate(batch):
            ids[row, : len(text_ids)] = text_ids
            mask[row, : len(text_ids)] = 1
        named = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        feeds.append({name: named[name] for name in embedder._input_names})
    session = embedder._session
    bare = whole = 0.0
    for _ in range(rounds):
        started = time.perf_counter()
        for feed in feeds:
            session.run(["last_hidden_state"], feed)
        bare += time.perf_counter() - started
        started = time.perf_counter()
        embedder.embed(texts)
        whole += time.perf_counter() - started
    return rounds * len(texts) / whole, rounds * len(texts) / bare


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    per_batch = _sample_texts(args.samples, batch=8)
    patterns = {"one call": [[t for texts in per_batch for t in texts]], "per batch": per_batch}
    embedders = {
        f"{BATCH_TOKENS} tokens": LocalEmbedder(),
        "48 texts": LocalEmbedder(batch_tokens=UNBOUNDED),
    }
    for embedder in embedders.values():
        embedder.embed(["warm up the model"])
    total = sum(map(len, per_batch))
    print(f"{total} texts of {args.samples} demo samples; {len(per_batch)} sample batches")
    for pattern, calls in patterns.items():
        cpu: dict[str, float] = dict.fromkeys(embedders, 0.0)
        vectors: dict[str, np.ndarray] = {}
        for round_ in range(args.rounds):
            names = list(embedders) if round_ % 2 == 0 else list(reversed(embedders))
            for name in names:
                seconds, vectors[name] = _cpu(embedders[name], calls)
                cpu[name] += seconds
        new, old = (cpu[name] / args.rounds for name in embedders)
        same = all(np.array_equal(v, next(iter(vectors.values()))) for v in vectors.values())
        print(
            f"{pattern}: CPU {new:.1f} s vs {old:.1f} s = {new / old:.2f} of 48 texts a batch "
            f"({1000 * new / total:.2f} CPU-ms a text); vectors bit-identical: {same}"
        )
    texts = [t for batch in per_batch for t in batch]
    for threads in (1, 2):
        ours, limit = _graph_limit(texts, threads, args.rounds)
        print(
            f"{threads} thread(s): embedder {ours:.0f} texts/s, bare graph {limit:.0f} texts/s "
            f"= {ours / limit:.2f} of the limit"
        )


if __name__ == "__main__":
    main()
