"""Baselines on the protocol's items: the lexical floor and plain MiniLM max-cosine.

  python -m training.verifier.baselines      (project venv; embeds with engine.embedders.local)

For each set (the same seeded samples the protocol scores), the AUROC of supported vs rest of
(a) the share of the claim's content words found in the source and (b) the largest cosine
between the claim and a passage of the source (WiCE: a context sentence; TruthfulQA: the
reference), with all-MiniLM-L6-v2 int8; for WiCE also the macro-F1 of "max cosine >= 0.75".
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine.embedders.local import LocalEmbedder  # noqa: E402
from training.verifier import data as D  # noqa: E402
from training.verifier.evaluate import auroc, f1s, lexical  # noqa: E402

CACHE_CAPS = {"truthfulqa": 2000, "begin_wow": 1500, "halueval_qa": 400}
SEED = 13


def main() -> None:
    emb = LocalEmbedder()
    out = {}
    names = sys.argv[1:] or [n for n in D.SETS if n != "wice_claims"] + ["wice_claims"]
    for name in names:
        items = D.load_set(name)
        items = D.sample_groups(items, CACHE_CAPS.get(name, len(items)), SEED)
        labels = np.asarray([it.label for it in items])
        texts = sorted({t for it in items for t in [it.claim, *it.passages]})
        t0 = time.time()
        vecs = np.asarray(emb.embed(texts))
        index = {t: i for i, t in enumerate(texts)}
        cos = np.asarray(
            [
                max(float(vecs[index[it.claim]] @ vecs[index[p]]) for p in it.passages)
                if it.passages
                else 0.0
                for it in items
            ]
        )
        row = {
            "n": len(items),
            "lexical_auroc": auroc(lexical(items), labels == D.SUPPORTED),
            "cosine_auroc": auroc(cos, labels == D.SUPPORTED),
        }
        if name == "wice_claims":
            row["cosine_0.75_macro_f1"] = f1s(
                (cos >= 0.75).astype(int), (labels == D.SUPPORTED).astype(int), [0, 1]
            )
        out[name] = row
        print(name, json.dumps(row), f"{len(texts)} texts in {time.time() - t0:.0f}s", flush=True)


if __name__ == "__main__":
    main()
