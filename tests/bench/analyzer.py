"""Benchmark of the response analyzer on 1,000 synthetic samples (local embedder).

Prints, one figure a line: the analyzer's cold-cache wall time as a ratio to embedding the
same unique texts once with the same model (goal <= 1.3), samples per second, the
warm-cache speed-up (goal >= 10x), and the calibration of the claim thresholds on
``tests/data/claim_matching.jsonl``.

Run: ``.venv/bin/python -m tests.bench.analyzer [--samples N]``
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.embedders.base import Embedder
from engine.embedders.cache import CachedEmbedder
from engine.embedders.keyword import KeywordEmbedder
from engine.embedders.local import LocalEmbedder
from engine.models import AnalyzerConfig, ExpectedAnswer, ExpectedClaim, GroundTruthChunk, TestCase
from engine.scoring.analyzer import ResponseAnalyzer, embedding_text
from engine.scoring.plan import plan_sample as _plan
from engine.text import candidate_spans

CALIBRATION_SET = Path(__file__).resolve().parents[1] / "data" / "claim_matching.jsonl"

_NAMES = ["Acme", "Birch", "Corvid", "Delta", "Evergreen", "Falcon"]
_NAMES += ["Granite", "Harbor", "Iris", "Juniper", "Kestrel", "Lumen"]
_PRODUCTS = ["Vault", "Ledger", "Studio", "Cloud", "Pro", "Suite", "Hub", "Desk", "Flow", "Works"]
_FEATURES = [
    ("costs ${n} per user per month", "the price is ${n} for each user every month"),
    ("includes a {n}-day free trial", "you can try it free for {n} days"),
    ("stores up to {n} GB per account", "each account holds as much as {n} GB"),
    ("offers support {n} hours a day", "help is available {n} hours daily"),
    ("was founded in {y}", "has been in business since {y}"),
    ("has offices in {n} countries", "operates from {n} countries"),
    ("guarantees {n}.9% uptime", "promises {n}.9 percent availability"),
    ("integrates with {n} third-party tools", "connects to {n} outside apps"),
    ("encrypts data with AES-{n}", "protects data using AES-{n} encryption"),
    ("ships orders within {n} business days", "sends out purchases in {n} working days"),
]
_FILLER = [
    "Many customers choose it for its simple setup and clear documentation.",
    "The onboarding guide walks new teams through every step of the configuration.",
    "Reviews often mention how responsive the product team is to feedback.",
    "Pricing pages list the differences between the plans in detail.",
    "Larger organisations can ask the sales team for a custom quote.",
    "A public roadmap shows which features are planned for the next quarter.",
    "The mobile apps mirror most of the functionality of the web version.",
    "Administrators can manage users and permissions from a single console.",
]


def synthetic_cases(count: int, seed: int = 7) -> list[tuple[TestCase, str]]:
    """``count`` deterministic cases: ~120-word responses, 5 claims, 3 ground-truth chunks."""
    rng = random.Random(seed)
    out: list[tuple[TestCase, str]] = []
    for index in range(count):
        brand = f"{rng.choice(_NAMES)} {rng.choice(_PRODUCTS)}"
        domain = f"{brand.split()[0].lower()}{index}.example"
        features = rng.sample(_FEATURES, 7)
        values = [{"n": rng.randint(2, 500), "y": rng.randint(1950, 2023)} for _ in features]
        facts = [f"{brand} {f[0].format(**v)}." for f, v in zip(features, values, strict=True)]
        paraphrases = [f"It {f[1].format(**v)}." for f, v in zip(features, values, strict=True)]
        claims = tuple(
            ExpectedClaim(
                id=f"c{i + 1}", text=facts[i], importance="required" if i < 3 else "expected"
            )
            for i in range(5)
        )
        chunks = tuple(
            GroundTruthChunk(
                chunk_id=f"p{j + 1}#0",
                page_url=f"https://{domain}/page{j + 1}",
                text=" ".join([*facts[j * 2 : j * 2 + 3], rng.choice(_FILLER)]),
            )
            for j in range(3)
        )
        stated = rng.sample(range(7), rng.randint(3, 6))
        sentences = [paraphrases[i] if rng.random() < 0.6 else facts[i] for i in stated]
        sentences += rng.sample(_FILLER, 3)
        rng.shuffle(sentences)
        cite = rng.choice(["", f" Source: https://{domain}/page1.", f" See {domain} for more."])
        response = f"{brand} is a good choice. " + " ".join(sentences) + cite
        while len(response.split()) < 110:
            response += " " + rng.choice(_FILLER)
        case = TestCase(
            id=f"bench-{index:04d}",
            domain=domain,
            query=f"What does {brand} offer?",
            expected_answer=ExpectedAnswer(text=" ".join(facts[:5]), claims=claims),
            ground_truth=chunks,
            brand_names=(brand,),
        )
        out.append((case, response))
    return out


@dataclass(frozen=True)
class Calibration:
    """How well a threshold separates stated from unstated claims on the labelled set."""

    threshold: float
    correct: int
    total: int
    best_threshold: float
    best_correct: int
    stated_range: tuple[float, float]
    unstated_range: tuple[float, float]


def calibrate(embedder: Embedder, path: Path = CALIBRATION_SET) -> Calibration:
    """Best cosine of each labelled claim over the response's candidate spans, scored at
    the embedder's default threshold and at the best threshold of a 0.025 grid."""
    items = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    groups = [
        [item["claim"], *(embedding_text(s.text) for s in candidate_spans(item["response"]))]
        for item in items
    ]
    # One embed call for every item's texts: the embedder batches by token count, so the
    # calls are fewer and fuller; the vectors are bit-identical to one call per item.
    every = embedder.embed([text for group in groups for text in group])
    best: list[float] = []
    start = 0
    for group in groups:
        vectors = every[start : start + len(group)]
        start += len(group)
        best.append(float((vectors[1:] @ vectors[0]).max()))
    scores = np.array(best)
    labels = np.array([bool(item["stated"]) for item in items])
    grid = [round(t, 3) for t in np.arange(0.1, 0.9, 0.025)]
    correct = {t: int(((scores >= t) == labels).sum()) for t in grid}
    best_t = max(grid, key=lambda t: (correct[t], -abs(t - embedder.default_threshold)))
    return Calibration(
        embedder.default_threshold,
        int(((scores >= embedder.default_threshold) == labels).sum()),
        len(items),
        best_t,
        correct[best_t],
        (round(float(scores[labels].min()), 3), round(float(scores[labels].max()), 3)),
        (round(float(scores[~labels].min()), 3), round(float(scores[~labels].max()), 3)),
    )


def _run(analyzer: ResponseAnalyzer, items: list[tuple[TestCase, str]], batch: int) -> float:
    start = time.perf_counter()
    for i in range(0, len(items), batch):
        for result in analyzer.analyze_batch(items[i : i + batch]):
            if not hasattr(result, "result_fields"):
                raise SystemExit(f"analysis failed: {result}")
    return time.perf_counter() - start


def main() -> None:
    """Run the benchmark and print one figure per line."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=100)
    args = parser.parse_args()
    config = AnalyzerConfig()
    items = synthetic_cases(args.samples)
    texts = sorted({t for case, response in items for t in _plan(case, response, config).texts()})
    print(f"samples: {len(items)}; unique texts to embed: {len(texts)}")

    baseline_model = LocalEmbedder()
    baseline_model.load()
    start = time.perf_counter()
    baseline_model.embed(texts)
    baseline = time.perf_counter() - start
    print(
        f"embedding the unique texts once: {baseline:.1f} s ({len(texts) / baseline:.0f} texts/s)"
    )

    with tempfile.TemporaryDirectory(prefix="evalhouse-bench-") as folder:
        model = LocalEmbedder()
        model.load()
        cold = _run(
            ResponseAnalyzer(CachedEmbedder(model, Path(folder)), config), items, args.batch
        )
        print(
            f"analyzer, cold cache: {cold:.1f} s = {cold / baseline:.2f}x "
            "the embedding time (goal <= 1.3)"
        )
        print(f"analyzer, cold cache: {len(items) / cold:.1f} samples/s")
        warm_embedder = CachedEmbedder(LocalEmbedder(), Path(folder))
        warm = _run(ResponseAnalyzer(warm_embedder, config), items, args.batch)
        print(
            f"analyzer, warm cache: {warm:.2f} s, {len(items) / warm:.0f} samples/s, "
            f"{cold / warm:.1f}x faster than cold (goal >= 10x); misses {warm_embedder.misses}"
        )

    for embedder in (LocalEmbedder(), KeywordEmbedder()):
        c = calibrate(embedder)
        print(
            f"calibration {embedder.name}: threshold {c.threshold} -> {c.correct}/{c.total} "
            f"({c.correct / c.total:.0%}) right; best grid threshold {c.best_threshold} -> "
            f"{c.best_correct}/{c.total}; stated {c.stated_range[0]}-{c.stated_range[1]}, "
            f"unstated {c.unstated_range[0]}-{c.unstated_range[1]}"
        )


if __name__ == "__main__":
    main()
