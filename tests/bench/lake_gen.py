"""Generate a large lake for benchmarks: N results with ~5 claims each, in real lake layout.

Rows are built column-wise with numpy and written with the models' Arrow schema, so
the files are exactly what the engine writes (only faster to make).

    python -m tests.bench.lake_gen DIR [--results 1000000]
"""

from __future__ import annotations

import argparse
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from engine.columns import arrow_schema
from engine.models import ClaimRecord, ResultRecord, RunRecord

TIERS = np.array(["poor", "fair", "good", "excellent"])


def _tiers(scores: np.ndarray) -> np.ndarray:
    return TIERS[np.searchsorted([50, 70, 85], scores, side="right")]


def _table(model: type, columns: dict[str, object], n: int) -> pa.Table:
    schema = arrow_schema(model)
    arrays = []
    for field in schema:
        if field.name in columns:
            arrays.append(pa.array(columns[field.name], type=field.type))
        else:
            arrays.append(pa.nulls(n, field.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def _write(lake: Path, table: str, run_id: str, iteration: int, seq: int, data: pa.Table) -> None:
    folder = lake / table / f"run_id={run_id}" / f"iteration={iteration}"
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(data, folder / f"part-{seq:06d}.parquet", compression="zstd")


def generate(lake: Path, results: int = 1_000_000, runs: int = 20, part_rows: int = 10_000) -> None:
    """Write ``results`` results (and ~5 claims each) spread over ``runs`` runs."""
    rng = np.random.default_rng(42)
    per_run = results // runs
    domains = np.array([f"site{i:02d}.example" for i in range(10)])
    providers = np.array(["gpt-x", "claude-y", "gemini-z"])
    t0 = datetime(2026, 1, 5, 9)
    for r in range(runs):
        run_id = f"bench{r:03d}"
        started = t0 + timedelta(days=7 * r)
        run = {
            "run_id": [run_id],
            "name": [f"bench run {r}"],
            "started_at": [started],
            "finished_at": [started + timedelta(hours=1)],
            "status": ["completed"],
            "iterations": [1],
            "judge_prompt_version": ["local"],
            "test_set": ["bench.jsonl"],
            "test_set_hash": [""],
            "test_set_name": ["bench"],
            "test_set_cases_hash": [""],
            "config": ["{}"],
            "judge": ["local"],
            "embedder": ["local"],
            "version": ["bench"],
            "host": ["bench"],
            "samples": [per_run],
            "updated_at": [started],
        }
        _write(lake, "runs", run_id, 0, 1, _table(RunRecord, run, 1))
        for seq, start in enumerate(range(0, per_run, part_rows), start=1):
            n = min(part_rows, per_run - start)
            ids = np.char.add("q", np.arange(start, start + n).astype(str))
            acc = rng.uniform(20, 100, n).round(1)
            comp = (rng.integers(0, 6, n) * 20).astype(float)
            attr = rng.choice([0.0, 50.0, 75.0, 100.0], n)
            cols = {
                "run_id": [run_id] * n,
                "iteration": [1] * n,
                "sample_id": ids,
                "candidate": [""] * n,
                "domain": domains[rng.integers(0, 10, n)],
                "ai_provider": providers[rng.integers(0, 3, n)],
                "query": ["How much is it?"] * n,
                "response": ["It costs $12 per user per month, see acme.example/pricing."] * n,
                "tags": [["pricing"]] * n,
                "accuracy": acc,
                "accuracy_tier": _tiers(acc),
                "completeness": comp,
                "completeness_tier": _tiers(comp),
                "attribution": attr,
                "attribution_tier": _tiers(attr),
                "judge_input_tokens": [0] * n,
                "judge_output_tokens": [0] * n,
                "cost_usd": np.zeros(n),
                "flags": [[]] * n,
                "sample_hash": [""] * n,
                "scored_at": [started] * n,
            }
            m = n * 5
            found = rng.random(m) < 0.7
            claims = {
                "run_id": [run_id] * m,
                "iteration": [1] * m,
                "sample_id": np.repeat(ids, 5),
                "candidate": [""] * m,
                "claim_id": np.tile(["c1", "c2", "c3", "c4", "c5"], n),
                "claim_text": ["The product costs $12 per user per month."] * m,
                "importance": np.tile(
                    ["required", "required", "expected", "expected", "optional"], n
                ),
                "found": found,
                "evidence": np.where(found, "It costs $12", None),
                "similarity": rng.uniform(0.2, 0.95, m),
                "response_start": np.where(found, 0, None),
                "response_end": np.where(found, 12, None),
            }
            _write(lake, "claims", run_id, 1, seq, _table(ClaimRecord, claims, m))
            # results last, as the runner does: it commits the claims part before it
            _write(lake, "results", run_id, 1, seq, _table(ResultRecord, cols, n))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("lake", type=Path)
    parser.add_argument("--results", type=int, default=1_000_000)
    args = parser.parse_args()
    generate(args.lake, args.results)


if __name__ == "__main__":
    main()
