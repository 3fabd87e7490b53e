"""Quantize the final fp32 ONNX verifier to int8 and check it against the torch model.

  python -m training.verifier.export --run /tmp/vf/final

Writes ``engine/verifier/data/verifier-minilm-int8.onnx`` and prints the largest difference of
the probabilities (torch fp32 vs ONNX fp32 vs ONNX int8) on 200 pairs the model never trained on
(halueval_qa) plus 200 it did, and the AUROC of each on halueval_qa.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine.verifier.model import (  # noqa: E402
    DATA_DIR,
    CrossEncoderVerifier,
    encode_pair,
    load_tokenizer,
    pad_batch,
    softmax,
)
from training.verifier import data as D  # noqa: E402
from training.verifier.evaluate import auroc  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", type=Path, default=Path("/tmp/vf/final"))
    ap.add_argument("--n", type=int, default=200)
    a = ap.parse_args()
    from onnxruntime.quantization import QuantType, quantize_dynamic

    fp32 = a.run / "verifier-minilm-fp32.onnx"
    int8 = a.run / "verifier-minilm-int8.onnx"
    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True)
    print(f"fp32 {fp32.stat().st_size / 1e6:.1f} MB -> int8 {int8.stat().st_size / 1e6:.1f} MB")

    halu = D.load_set("halueval_qa")
    rng = np.random.default_rng(0)
    held = [halu[i] for i in rng.choice(len(halu), a.n, replace=False)]
    seen = D.load_set("dialfact_small")[: a.n // 2] + D.load_set("summedits_sales")[: a.n // 2]
    pairs = [(it.evidence, it.claim) for it in held + seen]

    import torch

    from training.verifier.train import CrossEncoder, extract_minilm

    model = CrossEncoder(extract_minilm())
    model.load_state_dict(torch.load(a.run / "model.pt"))
    model.eval()
    tok = load_tokenizer()
    with torch.no_grad():
        rows = [encode_pair(tok, e, c) for e, c in pairs]
        out = []
        for i in range(0, len(rows), 32):
            ids, mask, types = pad_batch(rows[i : i + 32])
            out.append(
                model(
                    torch.from_numpy(ids), torch.from_numpy(mask), torch.from_numpy(types)
                ).numpy()
            )
    p_torch = softmax(np.vstack(out))
    cal = a.run / "calibration.json"
    res = {}
    for name, path in (("onnx fp32", fp32), ("onnx int8", int8)):
        v = CrossEncoderVerifier(model_path=path, calibration_path=a.run / "absent.json")
        p = v.predict(pairs)
        res[name] = p
        d = np.abs(p - p_torch)
        print(
            f"{name}: max |dP| vs torch {d.max():.4f}, mean {d.mean():.4f}; "
            f"argmax agrees {np.mean(p.argmax(1) == p_torch.argmax(1)):.3f}"
        )
    labels = np.asarray([it.label for it in held])
    for name, p in (("torch", p_torch), *res.items()):
        print(
            f"halueval_qa ({a.n} held pairs) AUROC {name}: "
            f"{auroc(p[: len(held), 0], labels == D.SUPPORTED):.4f}"
        )
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(int8, DATA_DIR / "verifier-minilm-int8.onnx")
    if cal.exists():
        shutil.copyfile(cal, DATA_DIR / "calibration.json")
    print(
        f"shipped {DATA_DIR / 'verifier-minilm-int8.onnx'} "
        f"({os.path.getsize(DATA_DIR / 'verifier-minilm-int8.onnx') / 1e6:.1f} MB)"
    )


if __name__ == "__main__":
    main()
