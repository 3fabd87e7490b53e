"""The verifier's training machinery without torch: the resumable loop, the merged-group
validation split and the synthetic pairs.

The loop is driven by a tiny numpy logistic regression: a run killed between checkpoints and
started again must end with exactly the weights of a run never interrupted, having lost at
most the steps since its last checkpoint.
"""

from __future__ import annotations

import gzip
import json
import pickle
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from training.verifier import loop, nli, synthetic


class Killed(Exception):
    """Stands in for a session that ends mid-run."""


class TinyTrainer:
    """Logistic regression by SGD; its own generator, so resuming must restore it."""

    def __init__(self, x: np.ndarray, y: np.ndarray, kill_at: int | None = None) -> None:
        self.x, self.y = x, y
        self.w = np.zeros(x.shape[1])
        self.rng = np.random.default_rng(0)
        self.kill_at = kill_at
        self.steps_run = 0

    def step(self, batch: Sequence[int], step: int, total: int) -> float:
        if step == self.kill_at:
            raise Killed
        idx = list(batch)
        noise = self.rng.normal(0, 0.01, self.w.shape)  # the "dropout": consumes the generator
        p = 1 / (1 + np.exp(-self.x[idx] @ self.w))
        self.w -= 0.5 * (self.x[idx].T @ (p - self.y[idx]) / len(idx)) + noise
        self.steps_run += 1
        return float(np.mean(-np.log(np.where(self.y[idx] == 1, p, 1 - p) + 1e-9)))

    def state(self) -> dict[str, Any]:
        return {"w": self.w.copy(), "rng": self.rng.bit_generator.state}

    def restore(self, state: dict[str, Any]) -> None:
        self.w = state["w"].copy()
        self.rng.bit_generator.state = state["rng"]

    def weights(self) -> dict[str, Any]:
        return {"w": self.w.copy()}

    def validate(self) -> dict[str, float]:
        p = 1 / (1 + np.exp(-self.x @ self.w))
        return {"loss": float(np.mean(-np.log(np.where(self.y == 1, p, 1 - p) + 1e-9)))}


class Clock:
    """A clock that advances one second per reading: a checkpoint every N steps."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        self.t += 1.0
        return self.t


def data() -> tuple[np.ndarray, np.ndarray, list[list[int]]]:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(64, 3))
    y = (x @ np.array([1.0, -2.0, 0.5]) > 0).astype(float)
    order = random.Random(2)
    plan = [order.sample(range(64), 8) for _ in range(30)]
    return x, y, plan


def test_a_killed_run_resumes_from_its_last_checkpoint_to_the_same_weights(tmp_path: Path) -> None:
    x, y, plan = data()
    straight = TinyTrainer(x, y)
    loop.run(straight, plan, tmp_path / "straight", fingerprint="f", checkpoint_s=4.5,
             clock=Clock(), log=lambda _: None)  # fmt: skip

    out = tmp_path / "interrupted"
    first = TinyTrainer(x, y, kill_at=17)
    with pytest.raises(Killed):
        loop.run(first, plan, out, fingerprint="f", checkpoint_s=4.5, clock=Clock(),
                 log=lambda _: None)  # fmt: skip
    saved = pickle.loads((out / loop.LAST).read_bytes())
    assert 0 < saved["step"] <= 17 and 17 - saved["step"] <= 5  # lost at most one interval
    second = TinyTrainer(x, y)
    lines: list[str] = []
    progress = loop.run(second, plan, out, fingerprint="f", checkpoint_s=4.5, clock=Clock(),
                        log=lines.append)  # fmt: skip
    assert lines[0].startswith(f"resumed at step {saved['step']}/30")
    assert second.steps_run == 30 - saved["step"]
    np.testing.assert_allclose(second.w, straight.w)
    assert progress["checkpoints"][-1]["step"] == 30
    best = loop.load_best(out)
    losses = [c["val"]["loss"] for c in progress["checkpoints"]]
    assert progress["checkpoints"][losses.index(min(losses))]["step"] == progress["best_step"]
    assert set(best) == {"w"}
    assert not list(out.glob("*.tmp"))


def test_a_checkpoint_of_another_run_is_refused(tmp_path: Path) -> None:
    x, y, plan = data()
    loop.run(TinyTrainer(x, y), plan[:3], tmp_path, fingerprint="a", clock=Clock(),
             log=lambda _: None)  # fmt: skip
    with pytest.raises(SystemExit, match="another run"):
        loop.run(TinyTrainer(x, y), plan, tmp_path, fingerprint="b", clock=Clock(),
                 log=lambda _: None)  # fmt: skip


def write(folder: Path, name: str, rows: list[dict[str, str]]) -> None:
    with gzip.open(folder / f"{name}.jsonl.gz", "wt", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")


def test_validation_is_split_by_merged_group_so_no_text_is_on_both_sides(tmp_path: Path) -> None:
    rows = []
    for g in range(400):
        claim = f"claim {g % 150}"  # claims shared across groups merge them
        rows.append(
            {"id": f"a-{g}", "source": "vitaminc_real", "group": f"case:{g}",
             "evidence": f"evidence {g}", "claim": claim, "label": "supported"}
        )  # fmt: skip
    write(tmp_path, "vitaminc_real", rows)
    train, val = nli.load_pairs(tmp_path)
    assert len(train) + len(val) == 400 and val
    assert not {p.claim for p in train} & {p.claim for p in val}
    assert not {p.evidence for p in train} & {p.evidence for p in val}
    _, again_val = nli.load_pairs(tmp_path)
    assert [p.id for p in again_val] == [p.id for p in val]


def test_synthetic_pairs_edit_real_sentences_with_the_right_labels() -> None:
    evidence = [
        "The Zephyr X2 was released in March 2019 and sold 250,000 units in its first year.",
        "Acme Corporation opened its first store in Lisbon in 1998, according to the company.",
        "The museum is open every day except Monday and admission is free for children.",
    ]
    pairs = [nli.Pair("vitaminc_real", f"p{i}", f"k{i}", e, "x", 0) for i, e in enumerate(evidence)]
    made = synthetic.synthesize(pairs, 60, seed=3)
    assert len(made) == 60
    labels = {p.label for p in made}
    assert labels == {nli.SUPPORTED, nli.CONTRADICTED, nli.NOT_SUPPORTED}
    for p in made:
        assert any(e in p.evidence for e in evidence)  # the edited sentence is in the evidence
        if p.label == nli.CONTRADICTED:
            assert p.claim not in evidence
    assert synthetic.negate("The plan is free.", random.Random(0)) in (
        "The plan is not free.",
        "The plan isn't free.",
    )
    swapped = synthetic.swap_number("It sold 250,000 units.", random.Random(0))
    assert swapped is not None and "250,000" not in swapped
    qa = synthetic.question_answer("It opened in Lisbon in 1998.", ["Porto"], random.Random(1))
    assert qa is not None and "?" in qa[0]


def test_token_batches_cover_every_index_once() -> None:
    lengths = [5, 190, 30, 30, 7, 120, 64]
    batches = loop.token_batches(lengths, 200)
    flat = sorted(i for b in batches for i in b)
    assert flat == list(range(len(lengths)))
    for b in batches:
        assert len(b) == 1 or max(lengths[i] for i in b) * len(b) <= 200
