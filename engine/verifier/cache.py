"""The verifier's disk cache: (model version, evidence, claim) -> logits, in sqlite3.

Embeddings are cached on disk, so without this a second run of the same test set (a
resume, a re-analysis, the next CI run on an unchanged set) would pay for every verifier
pair again: measured at 8-12x the warm time of a run before the verifier
(``python -m tests.bench.local_speed``). Logits are stored as raw float64 bytes, so a
cached pair is bit-identical to the one first computed and a warm run scores exactly like
a cold one (pairs are read one by one: ``engine.verifier.model``). Like every cache here it
is only an optimisation: a damaged file is set aside (``engine.cache_db``).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from engine.cache_db import open_cache_db, write_rows

_SCHEMA = """
CREATE TABLE IF NOT EXISTS verifier_pairs (
    model TEXT NOT NULL,
    pair_sha256 BLOB NOT NULL,
    logits BLOB NOT NULL,
    PRIMARY KEY (model, pair_sha256)
) WITHOUT ROWID
"""
_LOOKUP_CHUNK = 500  # well under sqlite's limit on bound parameters
_WIDTH = 3 * 8  # three float64 logits


def pair_key(evidence: str, claim: str) -> bytes:
    """sha256 of the pair (a separator no text holds keeps ("ab", "c") apart from ("a", "bc"))."""
    text = f"{evidence}\x00{claim}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class PairCache:
    """``folder/verifier.sqlite3``: one connection per process, shared behind a lock."""

    def __init__(self, folder: Path, model: str) -> None:
        self._db = open_cache_db(Path(folder) / "verifier.sqlite3", _SCHEMA, "verifier_pairs")
        self._model = model
        self._lock = threading.Lock()

    def lookup(self, keys: Sequence[bytes]) -> dict[bytes, npt.NDArray[np.float64]]:
        """The cached logits of ``keys`` that are there."""
        found: dict[bytes, npt.NDArray[np.float64]] = {}
        with self._lock:
            for i in range(0, len(keys), _LOOKUP_CHUNK):
                chunk = list(keys[i : i + _LOOKUP_CHUNK])
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    "SELECT pair_sha256, logits FROM verifier_pairs "
                    f"WHERE model = ? AND pair_sha256 IN ({marks})",
                    [self._model, *chunk],
                ).fetchall()
                for key, blob in rows:
                    if len(blob) == _WIDTH:
                        found[key] = np.frombuffer(blob, dtype=np.float64).copy()
        return found

    def store(self, keys: Sequence[bytes], logits: npt.NDArray[np.float64]) -> None:
        """Keep ``logits[i]`` for ``keys[i]`` (a failed write only costs recomputing)."""
        rows = [
            (self._model, key, np.asarray(row, dtype=np.float64).tobytes())
            for key, row in zip(keys, logits, strict=True)
        ]
        with self._lock:
            write_rows(self._db, "INSERT OR REPLACE INTO verifier_pairs VALUES (?, ?, ?)", rows)

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._db.close()
