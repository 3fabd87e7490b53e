"""Check the exported verifier against the torch model, and ship it.

  python -m training.verifier.export --run /work/vf/run           # compare only
  python -m training.verifier.export --run /work/vf/run --ship    # and copy into the package

``training.verifier.train`` writes ``model.pt``, the fp32 and int8 ONNX files and
``calibration.json`` into its ``--out``. This prints, on 600 validation pairs of the
entailment data (never trained on; never a benchmark item), the largest probability
difference between torch, ONNX fp32 and ONNX int8, their arg-max agreement and each one's
AUROC; ``--ship`` copies the int8 model, its calibration and the data's attribution notice
into ``engine/verifier/data``.
"""

from __future__ import annotations

import argparse
import random
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
from training.verifier import nli  # noqa: E402
from training.verifier.metrics import auroc  # noqa: E402

NOTICE = ROOT / "training" / "verifier" / "NOTICE-data.txt"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--run", type=Path, default=Path("/work/vf/run"))
    ap.add_argument("--n", type=int, default=600)
    ap.add_argument("--ship", action="store_true")
    a = ap.parse_args()
    import torch

    from training.verifier.train import CrossEncoder, extract_minilm

    _, val = nli.load_pairs()
    pairs = random.Random(5).sample(val, a.n)
    model = CrossEncoder(extract_minilm())
    model.load_state_dict(torch.load(a.run / "model.pt"))
    model.eval()
    tok = load_tokenizer()
    rows = [encode_pair(tok, p.evidence, p.claim) for p in pairs]
    out = []
    with torch.no_grad():
        for i in range(0, len(rows), 32):
            ids, mask, types = (torch.from_numpy(x) for x in pad_batch(rows[i : i + 32]))
            out.append(model(ids, mask, types).numpy())
    p_torch = softmax(np.vstack(out))
    supported = np.asarray([p.label == nli.SUPPORTED for p in pairs])
    print(f"torch: AUROC {auroc(p_torch[:, 0], supported):.4f}")
    absent = a.run / "no-calibration.json"
    for name in ("verifier-minilm-fp32.onnx", "verifier-minilm-int8.onnx"):
        path = a.run / name
        probs = CrossEncoderVerifier(model_path=path, calibration_path=absent).predict(
            [(p.evidence, p.claim) for p in pairs]
        )
        d = np.abs(probs - p_torch)
        agree = np.mean(probs.argmax(1) == p_torch.argmax(1))
        print(
            f"{name} ({path.stat().st_size / 1e6:.1f} MB): max |dP| {d.max():.4f}, "
            f"mean {d.mean():.4f}, arg-max agrees {agree:.3f}, "
            f"AUROC {auroc(probs[:, 0], supported):.4f}"
        )
    if a.ship:
        DATA_DIR.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(a.run / "verifier-minilm-int8.onnx", DATA_DIR / "verifier-minilm-int8.onnx")
        shutil.copyfile(a.run / "calibration.json", DATA_DIR / "calibration.json")
        shutil.copyfile(NOTICE, DATA_DIR / "NOTICE")
        print(f"shipped into {DATA_DIR}")


if __name__ == "__main__":
    main()
