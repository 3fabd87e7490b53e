"""Train the local judge's combiner on public human-labelled data and report held-out figures.

Run: ``.venv/bin/python -m tests.bench.train_judge [--write] [--folds 5]``

Training data (read in place, never copied into the project):

- ``wice``: WiCE claims (``../shared/benchmarks/wice_claims``, SUPPORTED / NOT_ENOUGH_INFO)
  and the claims of WiCE span items (``wice_spans``: a response sentence is supported when
  it overlaps no hallucinated span); ODC-BY 1.0 + CC BY-SA, Kamoi et al. 2023;
- ``own``: the project's hand-labelled ``tests/data/judge_quality.jsonl`` (three states);
- ``claims``: the project's ``tests/data/claim_matching.jsonl`` (claim stated / not stated
  in a response: the analyzer's found / missing question).

TruthfulQA is kept out of the claim combiner's training. It is the only answer-vs-reference
set, so the correctness combiner (``correctness_weights.json``: cosines of answer, reference
and question, the claims' support both ways, contradictions, length) is trained on its first
3,000 items and reported on question-grouped held-out folds (no question in two folds).

The combiner decides SUPPORTED vs not where the rules found no clean support (it is trained on
exactly those rows); CONTRADICTED and clean support stay with the rules. Every dataset gets
the same total weight and, within it, both classes the same weight, so no set dominates and
the threshold 0.5 aims at macro-F1. Figures printed:

- k-fold (stratified per dataset, seeded): every item predicted by a model that never saw it;
- leave-one-dataset-out: each dataset predicted by a model trained on the others only.

``--write`` fits on everything and writes ``engine/judges/local/combiner_weights.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.judges.local.combiner import (
    COMBINER_FEATURES,
    CORRECTNESS_FEATURES,
    CORRECTNESS_WEIGHTS_FILE,
    FEATURES,
    WEIGHTS_FILE,
    Combiner,
    fit_logistic,
    load_combiner,
    vetoed,
)
from engine.judges.local.judge import LocalJudge, claim_spans
from engine.judges.local.rules import RULES_VERSION
from tests.bench.judge_quality import cached_embedder

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT.parent / "shared" / "benchmarks"
VERSION = "lr1"
DATASETS = ("wice", "own", "claims")
SOURCES = ("wice_claims", "wice_spans", "own", "claims")


@dataclass(frozen=True)
class Example:
    """One (claim, context) pair with its gold three-state label."""

    dataset: str
    """Group for leave-one-dataset-out (WiCE claims and spans share their articles)."""
    source: str
    """Set the figures are reported for: wice_claims, wice_spans, own, claims."""
    claim: str
    context: tuple[str, ...]
    label: str
    """SUPPORTED, CONTRADICTED or NOT_ENOUGH_INFO."""


def _jsonl(path: Path) -> list[dict[str, object]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def examples() -> list[Example]:
    """Every training example, in a fixed order."""
    out: list[Example] = []
    for item in _jsonl(BENCH / "wice_claims" / "items.jsonl"):
        out.append(
            Example(
                "wice",
                "wice_claims",
                str(item["claim"]),
                tuple(item["context"]),  # type: ignore[arg-type]
                str(item["label"]),
            )
        )
    for item in _jsonl(BENCH / "wice_spans" / "items.jsonl"):
        response = str(item["response"])
        spans = [tuple(s) for s in item["hallucinated_spans"]]  # type: ignore[attr-defined]
        for claim in claim_spans(response):
            bad = any(s < claim.end and claim.start < e for s, e in spans)
            label = "NOT_ENOUGH_INFO" if bad else "SUPPORTED"
            out.append(Example("wice", "wice_spans", claim.text, tuple(item["context"]), label))  # type: ignore[arg-type]
    for item in _jsonl(ROOT / "tests" / "data" / "judge_quality.jsonl"):
        out.append(
            Example("own", "own", str(item["claim"]), tuple(item["context"]), str(item["label"]))  # type: ignore[arg-type]
        )
    for item in _jsonl(ROOT / "tests" / "data" / "claim_matching.jsonl"):
        label = "SUPPORTED" if item["stated"] else "NOT_ENOUGH_INFO"
        out.append(Example("claims", "claims", str(item["claim"]), (str(item["response"]),), label))
    return out


@dataclass(frozen=True)
class Featurised:
    """Feature rows and the rule-side outcome of every example."""

    x: np.ndarray
    contradicted: np.ndarray
    """The rules alone make the verdict CONTRADICTED (the combiner is not asked)."""
    rule_supported: np.ndarray
    """The hand-set thresholds would say SUPPORTED (the 'before' judge)."""


def featurise(items: Sequence[Example]) -> Featurised:
    """Features of every example, cached in the temp dir by content hash."""
    digest = hashlib.sha256(
        json.dumps(
            [VERSION, RULES_VERSION, FEATURES, [(e.claim, e.context) for e in items]]
        ).encode()
    ).hexdigest()[:16]
    cache = Path(tempfile.gettempdir()) / f"evalhouse-judge-features-{digest}.npz"
    if cache.exists():
        data = np.load(cache)
        return Featurised(data["x"], data["contradicted"], data["rule_supported"])
    judge = LocalJudge(cached_embedder(), use_combiner=False)
    rows, contra, support = [], [], []
    started = time.perf_counter()
    for n, e in enumerate(items):
        a = judge.features(e.claim, e.context)
        if a is None:
            rows.append(np.zeros(len(FEATURES)))
            contra.append(False)
            support.append(False)
            continue
        rows.append(a.features)
        margin = judge.thresholds.margin
        contra.append(
            a.contra is not None and (a.support is None or a.support[0] < a.contra[0] - margin)
        )
        support.append(a.support is not None and not contra[-1])
        if n % 200 == 0:
            print(f"  featurised {n}/{len(items)} in {time.perf_counter() - started:.0f} s")
    out = Featurised(np.array(rows), np.array(contra), np.array(support))
    np.savez(cache, x=out.x, contradicted=out.contradicted, rule_supported=out.rule_supported)
    return out


def weights_for(items: Sequence[Example], y: np.ndarray) -> np.ndarray:
    """Equal total weight per dataset, and per class within a dataset."""
    w = np.zeros(len(items))
    names = np.array([e.dataset for e in items])
    for name in set(names):
        for label in (0, 1):
            mask = (names == name) & (y == label)
            if mask.any():
                w[mask] = 1.0 / mask.sum()
    return w * len(items) / w.sum()


def fit(x: np.ndarray, y: np.ndarray, w: np.ndarray, l2: float) -> Combiner:
    """A combiner over :data:`COMBINER_FEATURES` fitted on full rows ``x`` (threshold 0.5)."""
    columns = [FEATURES.index(name) for name in COMBINER_FEATURES]
    weights, bias, mean, scale = fit_logistic(x[:, columns], y, w, l2=l2)
    return Combiner(COMBINER_FEATURES, mean, scale, weights, bias, 0.5, VERSION)


def three_state(p: np.ndarray, f: Featurised, threshold: float = 0.5) -> list[str]:
    """Verdicts as the local judge decides: the rules' CONTRADICTED first, then the rules'
    clean support, then the combiner where no detail of the claim is absent from the context
    (``engine.judges.local.combiner.vetoed``)."""
    veto = np.array([vetoed(row) for row in f.x])
    supported = f.rule_supported | ((p >= threshold) & ~veto)
    return [
        "CONTRADICTED" if c else "SUPPORTED" if s else "NOT_ENOUGH_INFO"
        for s, c in zip(supported, f.contradicted, strict=True)
    ]


def folds(items: Sequence[Example], y: np.ndarray, k: int, seed: int = 7) -> np.ndarray:
    """Fold number of every item, stratified by dataset and label."""
    rng = np.random.default_rng(seed)
    out = np.zeros(len(items), dtype=int)
    names = np.array([e.dataset for e in items])
    for name in sorted(set(names)):
        for label in (0, 1):
            idx = np.flatnonzero((names == name) & (y == label))
            rng.shuffle(idx)
            out[idx] = np.arange(len(idx)) % k
    return out


def report(title: str, items: Sequence[Example], pred: Sequence[str]) -> None:
    """Per-dataset figures and confusion matrices of ``pred``."""
    from tests.bench.judge_quality import confusion, scores

    print(f"== {title}")
    for name in SOURCES:
        idx = [i for i, e in enumerate(items) if e.source == name]
        gold = [items[i].label for i in idx]
        guess = [pred[i] for i in idx]
        if name.startswith("wice"):
            guess = ["NOT_ENOUGH_INFO" if g == "CONTRADICTED" else g for g in guess]
            labels = ["SUPPORTED", "NOT_ENOUGH_INFO"]
        elif name == "claims":
            labels = ["SUPPORTED", "NOT_ENOUGH_INFO"]
            guess = ["NOT_ENOUGH_INFO" if g == "CONTRADICTED" else g for g in guess]
        else:
            labels = ["SUPPORTED", "CONTRADICTED", "NOT_ENOUGH_INFO"]
        s = scores(gold, guess, labels)
        print(
            f"{title} {name}: n {len(idx)} accuracy {s['accuracy']:.3f} "
            f"macro-F1 {s['macro_f1']:.3f}"
        )
        print(confusion(gold, guess, labels, indent="    "))
    # The calibration figure: found / contradicted / missing on the project's labelled sets.
    idx = [i for i, e in enumerate(items) if e.source in ("own", "claims")]
    right = sum(pred[i] == items[i].label for i in idx)
    print(f"{title} calibration (own + claims, 3 states): accuracy {right / len(idx):.3f}")


def crossvalidate(k: int = 5, l2: float = 1.0) -> Combiner:
    """Print the before, k-fold and leave-one-dataset-out figures; return the combiner
    fitted on everything."""
    items = examples()
    y = np.array([e.label == "SUPPORTED" for e in items], dtype=float)
    counts = ", ".join(f"{n} {sum(e.dataset == n for e in items)}" for n in DATASETS)
    print(f"examples: {len(items)}; {counts}")
    f = featurise(items)
    before = ["CONTRADICTED" if c else "SUPPORTED" if s else "NOT_ENOUGH_INFO"
              for c, s in zip(f.contradicted, f.rule_supported, strict=True)]  # fmt: skip
    report("before (hand-set thresholds, no training)", items, before)

    def held_out(train: np.ndarray, test: np.ndarray, p: np.ndarray) -> None:
        # The combiner only decides where the rules found no clean support: train on those.
        train = train & ~f.rule_supported
        chosen = [items[i] for i in np.flatnonzero(train)]
        model = fit(f.x[train], y[train], weights_for(chosen, y[train]), l2)
        p[test] = model.probabilities(f.x[test])

    fold = folds(items, y, k)
    p = np.zeros(len(items))
    for n in range(k):
        held_out(fold != n, fold == n, p)
    report(f"{k}-fold held-out", items, three_state(p, f))
    names = np.array([e.dataset for e in items])
    p = np.zeros(len(items))
    for name in DATASETS:
        held_out(names != name, names == name, p)
    report("leave-one-dataset-out", items, three_state(p, f))
    rows = ~f.rule_supported
    final = fit(
        f.x[rows], y[rows], weights_for([items[i] for i in np.flatnonzero(rows)], y[rows]), l2
    )
    print("weights (standardised features):")
    for name, value in sorted(
        zip(COMBINER_FEATURES, final.weights, strict=True), key=lambda t: -abs(t[1])
    ):
        print(f"  {name:18s} {value:+.3f}")
    return final


TRUTHFULQA = BENCH / "truthfulqa" / "items.jsonl"


def correctness_rows(limit: int = 3000) -> tuple[list[dict[str, str]], np.ndarray, np.ndarray]:
    """TruthfulQA items, their correctness features and labels (cached in the temp dir)."""
    items = [{k: str(v) for k, v in i.items() if k != "meta"} for i in _jsonl(TRUTHFULQA)]
    items = items[:limit]
    y = np.array([i["label"] == "correct" for i in items], dtype=float)
    key = [VERSION, RULES_VERSION, CORRECTNESS_FEATURES, load_combiner().to_json(), limit]
    digest = hashlib.sha256(json.dumps(key).encode()).hexdigest()[:16]
    cache = Path(tempfile.gettempdir()) / f"evalhouse-correctness-features-{digest}.npy"
    if cache.exists():
        return items, np.load(cache), y
    judge = LocalJudge(cached_embedder(), combiner=load_combiner(), use_combiner=False)
    x = np.array(
        [judge.correctness_features(i["question"], i["response"], i["reference"]) for i in items]
    )
    np.save(cache, x)
    return items, x, y


def crossvalidate_correctness(k: int = 5, l2: float = 1.0, limit: int = 3000) -> Combiner:
    """Print held-out AUROC of the correctness combiner (folds grouped by question) and of
    each feature alone; return the combiner fitted on all ``limit`` items."""
    from tests.bench.truthfulqa import auroc

    items, x, y = correctness_rows(limit)
    positive = y.astype(bool)
    for j, name in enumerate(CORRECTNESS_FEATURES):
        print(f"truthfulqa: AUROC of {name} alone {auroc(x[:, j], positive):.3f}")
    questions = sorted({i["question"] for i in items})
    order = np.random.default_rng(7).permutation(len(questions))
    fold_of = {q: int(order[n]) % k for n, q in enumerate(questions)}
    fold = np.array([fold_of[i["question"]] for i in items])
    held = np.zeros(len(items))
    for n in range(k):
        train, test = fold != n, fold == n
        weights, bias, mean, scale = fit_logistic(x[train], y[train], None, l2=l2)
        held[test] = ((x[test] - mean) / scale) @ weights + bias
    print(
        f"truthfulqa: correctness combiner, {k}-fold held out (grouped by question): "
        f"AUROC {auroc(held, positive):.3f} on {len(items)} items"
    )
    weights, bias, mean, scale = fit_logistic(x, y, None, l2=l2)
    return Combiner(
        CORRECTNESS_FEATURES, mean, scale, weights, bias, 0.5, "cr1", CORRECTNESS_FEATURES
    )


def main() -> None:
    """Featurise, cross-validate, optionally write the weights."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    final = crossvalidate(args.folds, args.l2)
    if args.write:
        WEIGHTS_FILE.write_text(json.dumps(final.to_json(), indent=1) + "\n", encoding="utf-8")
        print(f"wrote {WEIGHTS_FILE.relative_to(ROOT)}")
    if TRUTHFULQA.exists():
        load_combiner.cache_clear()  # the correctness features read the claim combiner
        correctness = crossvalidate_correctness(args.folds, args.l2)
        if args.write:
            text = json.dumps(correctness.to_json(), indent=1) + "\n"
            CORRECTNESS_WEIGHTS_FILE.write_text(text, encoding="utf-8")
            print(f"wrote {CORRECTNESS_WEIGHTS_FILE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
