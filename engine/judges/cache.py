"""A disk cache of judge responses: the same prompt to the same model is paid for once.

Keyed by provider, model, prompt version, sha256 of the prompt and temperature. Only
successful, parsed responses are stored (never an error); API keys are not part of the key
or the value. One JSON file per entry, written atomically, so concurrent runs can share it.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def cache_key(
    provider: str, model: str, prompt_version: str, prompt: str, temperature: float
) -> str:
    """The cache key (hex sha256) of one judge request."""
    prompt_hash = hashlib.sha256(prompt.encode("utf-8")).hexdigest()
    material = json.dumps(
        {
            "provider": provider,
            "model": model,
            "prompt_version": prompt_version,
            "prompt_sha256": prompt_hash,
            "temperature": temperature,
        },
        sort_keys=True,
    )
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


class JudgeCache:
    """Judge responses under ``folder`` (for example ``EVALHOUSE_HOME/cache/judge``)."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        """Where entries live (created on first write)."""

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry, or None (missing or unreadable entries are misses)."""
        try:
            with self._path(key).open(encoding="utf-8") as f:
                value = json.load(f)
        except (OSError, json.JSONDecodeError):
            return None
        return value if isinstance(value, dict) else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        """Store an entry atomically (write to a temporary file, then rename)."""
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(value, f, ensure_ascii=False)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
