"""A resumable training loop: time-based checkpoints, the best one picked on validation.

Framework-free on purpose (no torch import): the trainer is anything with ``step``,
``state``/``restore`` and ``validate``, so the resume path is tested in the project's suite
with a tiny numpy trainer and used by the real run with the torch cross-encoder.

A checkpoint is written every ``checkpoint_s`` seconds and at the end: the full state (weights,
optimizer, schedule, random generators, the step reached) to ``last.ckpt``, atomically (a
temporary file renamed over the old one), so a session that ends or a ``kill -9`` loses at most
the steps since the last checkpoint. Each checkpoint also scores the validation slice; the
weights with the lowest validation loss so far are kept as ``best.ckpt``. ``progress.json``
records every checkpoint's step, time and validation figures.
"""

from __future__ import annotations

import json
import os
import pickle
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

LAST = "last.ckpt"
BEST = "best.ckpt"
PROGRESS = "progress.json"


class Trainer(Protocol):
    """What the loop drives."""

    def step(self, batch: Sequence[int], step: int, total: int) -> float:
        """Train on one batch (indices into the pair list); return its loss."""

    def state(self) -> dict[str, Any]:
        """Everything needed to continue exactly (weights, optimizer, generators)."""

    def restore(self, state: dict[str, Any]) -> None:
        """Continue from a ``state()``."""

    def weights(self) -> dict[str, Any]:
        """The weights alone (what ``best.ckpt`` keeps)."""

    def validate(self) -> dict[str, float]:
        """Validation figures; must hold ``loss`` (lower is better)."""


def token_batches(lengths: Sequence[int], batch_tokens: int) -> list[list[int]]:
    """Indices grouped by similar length so that each padded batch holds ~``batch_tokens``."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:
        width = max(lengths[i], *(lengths[j] for j in current)) if current else lengths[i]
        if current and width * (len(current) + 1) > batch_tokens:
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


def write_atomic(path: Path, payload: bytes) -> None:
    """Write ``payload`` to ``path`` so that a reader sees the old file or the new, never half."""
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("wb") as fh:
        fh.write(payload)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def run(
    trainer: Trainer,
    plan: Sequence[Sequence[int]],
    out: Path,
    *,
    fingerprint: str,
    checkpoint_s: float = 900.0,
    log: Callable[[str], None] = print,
    clock: Callable[[], float] = time.monotonic,
) -> dict[str, Any]:
    """Train over ``plan`` (one batch per step), resuming from ``out/last.ckpt`` if present.

    ``fingerprint`` names the run's data and settings; a checkpoint of another fingerprint is
    refused rather than continued with a different plan. Returns the progress record.
    """
    out.mkdir(parents=True, exist_ok=True)
    progress: dict[str, Any] = {"fingerprint": fingerprint, "total": len(plan), "checkpoints": []}
    start = 0
    elapsed_before = 0.0
    last = out / LAST
    if last.exists():
        saved = pickle.loads(last.read_bytes())
        if saved["fingerprint"] != fingerprint:
            raise SystemExit(
                f"{last}: a checkpoint of another run ({saved['fingerprint']}); "
                "use another --out or delete it"
            )
        trainer.restore(saved["trainer"])
        start = int(saved["step"])
        elapsed_before = float(saved["elapsed"])
        progress = saved["progress"]
        log(f"resumed at step {start}/{len(plan)} ({elapsed_before:.0f} s trained before)")
    t0 = clock()
    since = t0
    loss_sum, loss_n = 0.0, 0
    best = min((c["val"]["loss"] for c in progress["checkpoints"]), default=float("inf"))
    for step in range(start, len(plan)):
        loss_sum += trainer.step(plan[step], step, len(plan))
        loss_n += 1
        done = step + 1
        now = clock()
        if now - since >= checkpoint_s or done == len(plan):
            val = trainer.validate()
            elapsed = elapsed_before + now - t0
            record = {
                "step": done,
                "elapsed_s": round(elapsed, 1),
                "train_loss": round(loss_sum / max(1, loss_n), 4),
                "val": {k: round(v, 4) for k, v in val.items()},
            }
            progress["checkpoints"].append(record)
            if val["loss"] < best:
                best = val["loss"]
                progress["best_step"] = done
                write_atomic(out / BEST, pickle.dumps(trainer.weights()))
            state = {
                "fingerprint": fingerprint,
                "step": done,
                "elapsed": elapsed,
                "trainer": trainer.state(),
                "progress": progress,
            }
            write_atomic(last, pickle.dumps(state))
            write_atomic(out / PROGRESS, json.dumps(progress, indent=1).encode())
            log(json.dumps(record))
            since = clock()
            loss_sum, loss_n = 0.0, 0
    return progress


def load_best(out: Path) -> dict[str, Any]:
    """The weights of the best checkpoint."""
    weights: dict[str, Any] = pickle.loads((out / BEST).read_bytes())
    return weights
