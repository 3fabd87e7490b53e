"""Quality of a trained claim verifier (engine/verifier, int8 ONNX) on every public set.

python -m tests.bench.verifier_quality [--model PATH]   # up to 800 items per set, by group
python -m tests.bench.verifier_quality --all            # every item

None ships (docs/verifier.md): PATH is what ``training.verifier.export`` wrote, by default
``engine/verifier/data/verifier-minilm-int8.onnx``.

Reads ``../shared/benchmarks`` in place. The shipped model was trained on every set except
halueval_qa, so its figures on those sets are on trained-on sets (many of the items scored
are training items) and only show that the shipped file works as trained; the held-out
figures (leave-one-dataset-out and 5-fold) come from the training protocol
(``docs/verifier.md``). halueval_qa was never trained on: its AUROC and its
calibration (ECE, share right among verdicts at 0.75-0.85) are out-of-sample. Also prints
the inference speed on typical (60-token evidence, 20-token claim) pairs. Needs the project
venv only (numpy, onnxruntime, tokenizers): no torch.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine.verifier import CrossEncoderVerifier  # noqa: E402
from training.verifier import data as D  # noqa: E402
from training.verifier.evaluate import auroc, calibration, f1s, lexical  # noqa: E402


def sample(items: list[D.Item], cap: int, seed: int = 7) -> list[D.Item]:
    """Whole groups, in a seeded order, until ``cap`` items."""
    if len(items) <= cap:
        return items
    groups = sorted({it.group for it in items})
    random.Random(seed).shuffle(groups)
    keep: set[str] = set()
    n = 0
    by_group: dict[str, int] = {}
    for it in items:
        by_group[it.group] = by_group.get(it.group, 0) + 1
    for g in groups:
        if n >= cap:
            break
        keep.add(g)
        n += by_group[g]
    return [it for it in items if it.group in keep]


def speed(verifier: CrossEncoderVerifier) -> float:
    """Pairs per second on 60-word-piece evidence and 20-word-piece claims, batches of 64."""
    ev = " ".join(["the company reported revenue growth in the third quarter of the year"] * 5)
    cl = "the company reported that its revenue grew strongly in the third quarter, analysts said"
    pairs = [(ev, cl)] * 64
    verifier.predict(pairs[:4])
    t0 = time.perf_counter()
    for _ in range(3):
        verifier.predict(pairs)
    return 3 * len(pairs) / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--cap", type=int, default=800)
    ap.add_argument("--model", type=Path, default=None, help="an exported int8 ONNX model")
    a = ap.parse_args()
    v = CrossEncoderVerifier(model_path=a.model) if a.model else CrossEncoderVerifier()
    t0 = time.perf_counter()
    v.predict([("a", "b")])
    print(
        f"verifier {v.version}: loaded in {time.perf_counter() - t0:.2f} s, "
        f"temperature {v.temperature:.3f}"
    )
    print(
        f"{'set':16s} {'n':>5s} {'AUROC':>6s} {'floor':>6s} {'F1':>6s} {'ECE':>6s}  "
        f"right@0.8   sample"
    )
    for name in D.SETS:
        items = D.load_set(name)
        got = items if a.all else sample(items, a.cap)
        labels = np.asarray([it.label for it in got])
        t1 = time.perf_counter()
        p = v.predict([(it.evidence, it.claim) for it in got])
        dt = time.perf_counter() - t1
        au = auroc(p[:, 0], labels == D.SUPPORTED)
        floor = auroc(lexical(got), labels == D.SUPPORTED)
        f1 = float("nan")
        if name == "wice_claims":
            f1 = f1s((p.argmax(1) == 0).astype(int), (labels == 0).astype(int), [0, 1])
        if name == "dialfact_small":
            f1 = f1s(p.argmax(1), labels, [0, 1, 2])
        ece, near = calibration(p[:, 0], labels)
        kind = "never trained on" if name == "halueval_qa" else "trained-on set"
        print(
            f"{name:16s} {len(got):5d} {au:6.3f} {floor:6.3f} {f1:6.3f} {ece:6.3f}  "
            f"{near:10s} {kind}, {len(got) / dt:.0f} pairs/s",
            flush=True,
        )
    print(
        f"speed: {speed(v):.1f} pairs/s (60-token evidence + 20-token claim, int8, "
        f"{v._threads} threads)"
    )


if __name__ == "__main__":
    main()
