"""Batch API judging against live judging: requests made and dollars recorded.

The same demo test set is run twice through the real ``evalhouse run`` with an
``openai:gpt-4o-mini`` judge on the loopback server (which speaks the Batch API): live,
then ``--judge-mode batch``, each in its own home (no shared cache). Figures: HTTP requests
the server received (chat calls live; file uploads, batch creations, status reads and
downloads in batch mode), judge prompts answered, dollars recorded in the lake, and the
cost ratio batch / live (goal 0.5: the Batch API's half price, nothing paid twice).

Run: ``.venv/bin/python -m tests.bench.batch_judging [--samples 40]``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import tempfile
from pathlib import Path

import engine.judges.http.batch_queue as batch_queue
from engine.demo import build_weekly_test_sets
from engine.lake import read_table
from engine.settings import resolve_paths
from evalhouse.cli import main as cli
from tests.cli.test_fewer_calls import _oracle
from tests.loopback_llm import LoopbackLLM


def _run(home: Path, test_set: Path, *extra: str) -> tuple[str, float]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = cli(
            ["run", "--test-set", str(test_set), "--name", "bench", "--judge",
             "openai:gpt-4o-mini", "--home", str(home), "--no-ingest", *extra]
        )  # fmt: skip
    if code != 0:
        raise SystemExit(f"run failed with exit {code}")
    run_id = out.getvalue().strip().splitlines()[-1]
    rows = read_table(resolve_paths(home).lake, "results", run_id, columns=("cost_usd",))
    return run_id, float(sum(c or 0.0 for c in rows.column("cost_usd").to_pylist()))


def main() -> None:
    """Print requests and dollars of a live and a batch run, and their ratio."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=40)
    args = parser.parse_args()
    batch_queue.BATCH_SETTLE_S = 0.5  # seconds, not the production 2 s / 30 s
    batch_queue.BATCH_POLL_S = 0.1
    with tempfile.TemporaryDirectory() as tmp, LoopbackLLM(responder=_oracle) as llm:
        root = Path(tmp)
        sets = build_weekly_test_sets(root / "sets", weeks=1)[0][1]
        lines = sets.read_text().splitlines(keepends=True)[: args.samples]
        test_set = root / "set.jsonl"
        test_set.write_text("".join(lines))
        os.environ["OPENAI_API_KEY"] = "sk-bench"
        os.environ["OPENAI_BASE_URL"] = llm.url
        # one at a time: a prompt two samples share is paid once, as a batch pays it
        _, live_cost = _run(root / "live", test_set, "--concurrency", "1")
        live_requests = llm.count
        _, batch_cost = _run(root / "batch", test_set, "--judge-mode", "batch")
        batch_requests = llm.count - live_requests
        b = llm.batches
    print(f"samples:              {len(lines)}")
    print(
        f"live:  {live_requests:5d} HTTP requests ({live_requests} judge calls), ${live_cost:.6f}"
    )
    print(
        f"batch: {batch_requests:5d} HTTP requests ({b.uploads} uploads, {b.created} batches, "
        f"{b.lines_answered} prompts answered), ${batch_cost:.6f}"
    )
    print(f"requests batch/live:  {batch_requests / max(1, live_requests):.3f}")
    print(f"cost batch/live:      {batch_cost / live_cost:.3f} (goal 0.5)")


if __name__ == "__main__":
    main()
