"""Test-set building and cheaper judging.

1. ``evalhouse testset from-pages``, offline (sentence selection + templates, local
   embedder for near-duplicates): cases generated per second over a folder of pages.
2. ``--cascade`` on the demo test set: judge calls of a full LLM-judged run and of a
   cascaded run (local judge first, LLM only where its decision is not clear), against a
   loopback judge in the OpenAI wire format that passes answers stating the page's facts;
   the saving as a ratio, and how many cascaded decisions equal the full run's.

Run: ``.venv/bin/python -m tests.bench.testsets [--pages N] [--cases N] [--samples N]``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from engine.demo import build_weekly_test_sets
from engine.lake import read_table
from engine.settings import resolve_paths
from evalhouse.cli import main as cli
from tests.loopback_llm import LoopbackLLM, Reply

PLANS = ("Starter", "Team", "Business", "Enterprise")


def _write_pages(folder: Path, n: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        plan = PLANS[i % len(PLANS)]
        text = (
            f"# {plan} plan {i}\n\n"
            f"The {plan} plan {i} costs {10 + i % 40} dollars per user per month. "
            f"It includes {2 + i % 9} projects and {50 * (1 + i % 5)} GB of storage. "
            f"Support answers within {1 + i % 3} business days.\n\n"
            f"Customers on the {plan} plan {i} can export their data at any time. "
            f"Annual billing saves {5 + i % 20} percent. The plan was introduced in "
            f"{2015 + i % 10}.\n"
        )
        (folder / f"plan-{i:04d}.md").write_text(text, encoding="utf-8")


def generation_bench(pages: int, cases: int) -> None:
    """Print cases/s of the offline generator."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "pages"
        _write_pages(folder, pages)
        out = Path(tmp) / "generated.jsonl"
        args = ["testset", "from-pages", str(folder), "--count", str(cases), "--output",
                str(out), "--home", str(Path(tmp) / "home"), "--base-url",
                "https://acme.example/"]  # fmt: skip
        started = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = cli(args)
        elapsed = time.perf_counter() - started
        made = len(out.read_text(encoding="utf-8").splitlines()) if out.exists() else 0
    print(
        f"from-pages offline: {made} cases from {pages} pages in {elapsed:.1f} s = "
        f"{made / elapsed:.1f} cases/s (exit {code}; model load included)"
    )


def _oracle(provider: str, body: dict[str, Any]) -> Reply:
    """Rubric 5 for answers that state a price ('per month'), 2 otherwise."""
    prompt = json.dumps(body.get("messages", []))
    good = "per month" in prompt.split("ANSWER")[-1]
    score = 5 if good else 2
    return Reply.json(
        {
            "claims": ["The answer states a fact."],
            "verdict": "SUPPORTED",
            "evidence": "page",
            "faithfulness": {"score": score, "reasoning": "r"},
            "completeness": {"score": score, "reasoning": "r"},
            "score": score,
            "reasoning": "r",
            "used": True,
        }
    )


def cascade_bench(samples: int) -> None:
    """Print judge calls of a full and a cascaded run of the demo set, and agreement."""
    with tempfile.TemporaryDirectory() as tmp:
        _, week, _ = build_weekly_test_sets(Path(tmp) / "sets", weeks=1)[0]
        test_set = Path(tmp) / "demo.jsonl"
        test_set.write_text("".join(week.read_text().splitlines(keepends=True)[:samples]))
        counts: dict[str, int] = {}
        rows: dict[str, dict[str, Any]] = {}
        with LoopbackLLM(responder=_oracle) as llm:
            os.environ["OPENAI_API_KEY"] = "sk-bench"
            os.environ["OPENAI_BASE_URL"] = llm.url
            for name, extra in (("full", []), ("cascade", ["--cascade"])):
                home = resolve_paths(Path(tmp) / name)  # own judge cache: no free answers
                before = llm.count
                out = io.StringIO()
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
                    cli(["run", "--test-set", str(test_set), "--name", name, "--judge",
                         "openai:gpt-4o-mini", "--home", str(home.home), "--no-ingest",
                         "--concurrency", "16", "--max-failed", "1", *extra])  # fmt: skip
                counts[name] = llm.count - before
                run_id = out.getvalue().strip().splitlines()[-1]
                table = read_table(home.lake, "results", run_id).to_pylist()
                rows[name] = {r["sample_id"]: r for r in table}
    full, cascaded = rows["full"], rows["cascade"]
    same = sum(full[s]["passed"] == r["passed"] for s, r in cascaded.items())
    local = [s for s, r in cascaded.items() if r["scored_by"] == "local"]
    local_same = sum(full[s]["passed"] == cascaded[s]["passed"] for s in local)
    print(
        f"cascade on {len(cascaded)} demo samples: judge calls {counts['cascade']} / "
        f"{counts['full']} = {counts['cascade'] / max(1, counts['full']):.2f} of the full run; "
        f"{len(local)} decided locally ({local_same} of them as the full run decided); "
        f"pass/fail equal on {same} of {len(cascaded)} samples"
    )


def main() -> None:
    """Run both benchmarks."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--samples", type=int, default=110)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    generation_bench(args.pages, args.cases)
    cascade_bench(args.samples)


if __name__ == "__main__":
    main()
