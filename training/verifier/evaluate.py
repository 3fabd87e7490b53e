"""Figures of the verifier protocol from saved predictions; prints one table.

  python -m training.verifier.evaluate --runs /tmp/vf  [--calibration out.json]

Reads ``<runs>/lodo_<set>/preds.jsonl`` (leave-one-dataset-out) and ``<runs>/fold<k>/preds.jsonl``
(5-fold by group, out-of-fold), fits the calibration temperature on the out-of-fold logits,
and prints per set: AUROC of P(supported) supported-vs-rest, WiCE macro-F1, DialFact 3-way
macro-F1, expected calibration error and the share right among verdicts near 0.8, beside the
lexical floor computed on the same items. Needs numpy only.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from training.verifier import data as D  # noqa: E402

SETS = D.SETS


def softmax(z: np.ndarray, t: float = 1.0) -> np.ndarray:
    z = z / t
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def auroc(scores: np.ndarray, pos: np.ndarray) -> float:
    """Mann-Whitney AUROC with ties counted half."""
    pos = pos.astype(bool)
    n1, n0 = int(pos.sum()), int((~pos).sum())
    if n1 == 0 or n0 == 0:
        return float("nan")
    order = np.argsort(scores, kind="mergesort")
    ranks = np.empty(len(scores))
    s = scores[order]
    i = 0
    while i < len(s):
        j = i
        while j < len(s) and s[j] == s[i]:
            j += 1
        ranks[order[i:j]] = (i + j + 1) / 2
        i = j
    return float((ranks[pos].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def f1s(pred: np.ndarray, gold: np.ndarray, classes: list[int]) -> float:
    out = []
    for c in classes:
        tp = np.sum((pred == c) & (gold == c))
        fp = np.sum((pred == c) & (gold != c))
        fn = np.sum((pred != c) & (gold == c))
        out.append(0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn))
    return float(np.mean(out))


def binary_nll(logits: np.ndarray, labels: np.ndarray, t: float) -> float:
    """Loss of the training objective (3-way for labels 0-2, binary for 3) at temperature t."""
    p = softmax(logits, t)
    eps = 1e-12
    three = labels < 3
    ll = np.where(
        three,
        np.log(p[np.arange(len(p)), np.where(three, labels, 0)] + eps),
        np.log(1 - p[:, 0] + eps),
    )
    return float(-ll.mean())


def fit_temperature(logits: np.ndarray, labels: np.ndarray) -> float:
    grid = np.exp(np.linspace(math.log(0.3), math.log(30.0), 400))
    return float(min(grid, key=lambda t: binary_nll(logits, labels, t)))


def calibration(p_sup: np.ndarray, labels: np.ndarray, bins: int = 10) -> tuple[float, str]:
    """ECE of the binary verdict (supported iff P >= 0.5) and the share right near 0.8."""
    verdict = p_sup >= 0.5
    conf = np.where(verdict, p_sup, 1 - p_sup)
    right = verdict == (labels == D.SUPPORTED)
    edges = np.linspace(0.5, 1.0, bins + 1)
    ece = 0.0
    for lo, hi in itertools.pairwise(edges):
        sel = (conf >= lo) & ((conf < hi) | (hi == 1.0))
        if sel.any():
            ece += sel.mean() * abs(conf[sel].mean() - right[sel].mean())
    near = (conf >= 0.75) & (conf < 0.85)
    tag = f"{right[near].mean():.2f} of {int(near.sum())}" if near.any() else "n/a"
    return float(ece), tag


def lexical(items: list[D.Item]) -> np.ndarray:
    """The benchmarks' lexical floor score: share of the claim's content words in the source."""
    from engine.verifier.evidence import content_words, words

    out = []
    for it in items:
        c = content_words(it.claim)
        s = set(words(" ".join(it.passages)))
        out.append(sum(w in s for w in c) / max(1, len(c)))
    return np.asarray(out)


def read_preds(paths: list[Path]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for p in paths:
        if p.exists():
            for line in p.open(encoding="utf-8"):
                o = json.loads(line)
                out[o["id"]] = o
    return out


def figures(
    name: str,
    ids: list[str],
    labels: np.ndarray,
    logits: np.ndarray,
    t: float,
    threshold: float | None = None,
) -> dict[str, object]:
    p = softmax(logits, t)
    row: dict[str, object] = {"n": len(ids), "auroc": auroc(p[:, 0], labels == D.SUPPORTED)}
    if name == "wice_claims":
        gold = (labels == D.SUPPORTED).astype(int)
        row["macro_f1_argmax"] = f1s((p.argmax(1) == 0).astype(int), gold, [0, 1])
        if threshold is not None:
            row["macro_f1_thr"] = f1s((p[:, 0] >= threshold).astype(int), gold, [0, 1])
    if name == "dialfact_small":
        row["macro_f1_3way"] = f1s(p.argmax(1), labels, [0, 1, 2])
    ece, near = calibration(p[:, 0], labels)
    row["ece"] = ece
    row["near_0.8"] = near
    return row


def best_threshold(p_sup: np.ndarray, gold: np.ndarray) -> float:
    cands = np.unique(np.round(p_sup, 3))
    return float(max(cands, key=lambda c: f1s((p_sup >= c).astype(int), gold, [0, 1])))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=Path, default=Path("/tmp/vf"))
    ap.add_argument("--calibration", type=Path, default=None)
    a = ap.parse_args()
    everything = D.load_all(SETS)
    fold_preds = read_preds(sorted(a.runs.glob("fold*/preds.jsonl")))
    lodo_preds = read_preds(sorted(a.runs.glob("lodo_*/preds.jsonl")))
    t = 1.0
    cal_src, cal_name = (
        (fold_preds, "5-fold out-of-fold")
        if fold_preds
        else (lodo_preds, "leave-one-dataset-out held-out")
    )
    if cal_src:
        lg = np.asarray([o["logits"] for o in cal_src.values()])
        lb = np.asarray([o["label"] for o in cal_src.values()])
        t = fit_temperature(lg, lb)
        print(
            f"temperature fitted on {len(lg)} {cal_name} predictions: {t:.3f} "
            f"(loss {binary_nll(lg, lb, 1.0):.4f} -> {binary_nll(lg, lb, t):.4f})"
        )
        if a.calibration:
            a.calibration.write_text(
                json.dumps(
                    {
                        "temperature": round(t, 4),
                        "fitted_on": f"{cal_name} predictions",
                        "n": len(lg),
                    },
                    indent=2,
                )
                + "\n",
                encoding="utf-8",
            )
    header = (
        f"{'set':16s} {'protocol':8s} {'n':>5s} {'AUROC':>6s} {'floor':>6s} {'F1':>6s} "
        f"{'F1thr':>6s} {'ECE':>6s}  right@0.8"
    )
    print(header)
    print("-" * len(header))
    for name in SETS:
        items = everything[name]
        for proto in ("lodo", "5fold"):
            if proto == "lodo":
                preds = read_preds([a.runs / f"lodo_{name}" / "preds.jsonl"])
                if name == "halueval_qa" and not preds:
                    preds = read_preds([a.runs / "final" / "preds.jsonl"])
            else:
                preds = fold_preds
            got = [it for it in items if it.id in preds]
            if not got:
                print(f"{name:16s} {proto:8s}   (not run)")
                continue
            ids = [it.id for it in got]
            labels = np.asarray([it.label for it in got])
            floor = auroc(lexical(got), labels == D.SUPPORTED)
            logits = np.asarray([preds[i]["logits"] for i in ids])
            thr = None
            if name == "wice_claims" and proto == "5fold":
                # threshold of fold k fitted on the other folds' out-of-fold predictions
                p = softmax(logits, t)[:, 0]
                gold = (labels == D.SUPPORTED).astype(int)
                folds = np.asarray([D.fold_of(it.group) for it in got])
                dec = np.zeros(len(got), dtype=int)
                for k in sorted(set(folds.tolist())):
                    tr = folds != k
                    if not tr.any():  # only one fold scored: arg-max decision
                        dec[~tr] = (softmax(logits[~tr], t).argmax(1) == 0).astype(int)
                        continue
                    thr_k = best_threshold(p[tr], gold[tr])
                    dec[~tr] = (p[~tr] >= thr_k).astype(int)
                thr_f1 = f1s(dec, gold, [0, 1])
            row = figures(name, ids, labels, logits, t, thr)
            f1 = row.get("macro_f1_argmax", row.get("macro_f1_3way", float("nan")))
            f1t = thr_f1 if (name == "wice_claims" and proto == "5fold") else float("nan")
            print(
                f"{name:16s} {proto:8s} {row['n']:5d} {row['auroc']:6.3f} {floor:6.3f} "
                f"{f1:6.3f} {f1t:6.3f} {row['ece']:6.3f}  {row['near_0.8']}"
            )
    for proto, src in (("5fold", fold_preds), ("lodo", lodo_preds)):
        if src:
            lg = np.asarray([o["logits"] for o in src.values()])
            lb = np.asarray([o["label"] for o in src.values()])
            ece, near = calibration(softmax(lg, t)[:, 0], lb)
            ece1, near1 = calibration(softmax(lg, 1.0)[:, 0], lb)
            print(
                f"all sets, {proto} out-of-fold: ECE {ece1:.3f} -> {ece:.3f} after temperature;"
                f" right among verdicts at 0.75-0.85: {near1} -> {near}"
            )


if __name__ == "__main__":
    main()
