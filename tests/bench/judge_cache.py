"""Judge cache: CPU of storing and reading entries, against one file per entry.

Each judge call puts one entry (its reply, ~400 bytes of JSON) and first looks it up. The
cache keeps them in one sqlite database written in batches (``engine.judges.http.cache``);
earlier versions wrote one file per entry (a temporary file, then a rename), reproduced
here as the baseline. Figures: CPU-seconds (user + system) of this process for ``--entries``
puts and misses, then as many hits, for both, and their ratio.

Run: ``.venv/bin/python -m tests.bench.judge_cache [--entries 5000]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from engine.judges.http.cache import JudgeCache, cache_key

REPLY = {
    "content": json.dumps({"verdicts": [{"claim": 1, "verdict": "SUPPORTED"}] * 4}),
    "prompt": "verify.v2",
    "model": "gpt-4o-mini",
    "usage": {"input": 512, "output": 64},
}


def _cpu(work: Callable[[], None]) -> float:
    before = os.times()
    work()
    after = os.times()
    return (after.user - before.user) + (after.system - before.system)


def _files(folder: Path, keys: list[str]) -> tuple[float, float]:
    """The one-file-per-entry layout: KEY[:2]/KEY.json through a temporary file."""

    def path(key: str) -> Path:
        return folder / key[:2] / f"{key}.json"

    def write() -> None:
        for i, key in enumerate(keys):
            with contextlib.suppress(OSError):  # the miss before the call
                path(key).open(encoding="utf-8").close()
            target = path(key)
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".tmp-{os.getpid()}-{i}.json")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(json.dumps(REPLY).encode())
            os.replace(tmp, target)

    def read() -> None:
        for key in keys:
            with path(key).open(encoding="utf-8") as f:
                json.load(f)

    return _cpu(write), _cpu(read)


def _database(folder: Path, keys: list[str]) -> tuple[float, float]:
    cache = JudgeCache(folder)

    def write() -> None:
        for key in keys:
            cache.get(key)
            cache.put(key, REPLY)
        cache.flush()

    def read() -> None:
        for key in keys:
            assert cache.get(key) is not None

    return _cpu(write), _cpu(read)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=5000)
    args = parser.parse_args()
    keys = [
        cache_key("openai", "gpt-4o-mini", "verify.v2", f"p{i}", 0.0) for i in range(args.entries)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        files_write, files_read = _files(Path(tmp) / "files", keys)
        db_write, db_read = _database(Path(tmp) / "db", keys)
        wall = time.perf_counter() - started
    n = args.entries
    print(f"{n} entries, {wall:.1f} s in all")
    print(
        f"miss + put: one database {1000 * db_write / n:.3f} CPU-ms an entry, one file per "
        f"entry {1000 * files_write / n:.3f}: ratio {db_write / files_write:.3f}"
    )
    print(
        f"hit: one database {1000 * db_read / n:.3f} CPU-ms an entry, one file per entry "
        f"{1000 * files_read / n:.3f}: ratio {db_read / files_read:.3f}"
    )


if __name__ == "__main__":
    main()
