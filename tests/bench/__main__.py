"""Run every benchmark (``make bench``): each module of this folder with a ``main()``.

python -m tests.bench            # all
python -m tests.bench ingest     # some

``peer_promptfoo`` (evalhouse against promptfoo on the same judge calls) installs promptfoo
from npm on first use and skips itself without node.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HELPERS = {"__init__", "__main__", "lake_gen"}


def main() -> int:
    folder = Path(__file__).resolve().parent
    names = sys.argv[1:] or sorted(
        p.stem for p in folder.glob("*.py") if p.stem not in HELPERS and not p.stem.startswith("_")
    )
    failed = []
    for name in names:
        print(f"== {name} (python -m tests.bench.{name})", flush=True)
        started = time.perf_counter()
        code = subprocess.call([sys.executable, "-m", f"tests.bench.{name}"])
        print(
            f"== {name}: {'ok' if code == 0 else f'exit {code}'} in "
            f"{time.perf_counter() - started:.0f} s\n",
            flush=True,
        )
        if code:
            failed.append(name)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
