"""Re-analysis and judge-drift benchmark.

1. Re-analysis against the original run, measured in one process: the original run gets
   its answers from a target (a loopback server in the OpenAI wire format that answers each
   case's recorded response after ``--target-delay`` seconds, 0.25 s by default: a fast
   hosted model is slower) and is scored by the local judge and local embedder; the
   re-analysis scores the same stored answers against new ground truth (every expected
   answer reworded, so its references are embedded afresh) with no target call (counted on
   the server). Goal: re-analysis time / original time < 0.5 on 1,000 samples.
2. Judge drift: the time to check drift on 50 anchors of that run, the new judge a loopback
   judge (OpenAI wire, ``--judge-delay`` per call) and the old one's scores stored.

Run: ``.venv/bin/python -m tests.bench.reanalysis [--samples N] [--target-delay S]
[--judge-delay S]``.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from engine.clock import utcnow
from engine.drift import JudgeSide, anchor_set, check_drift, run_config
from engine.models import RunConfig
from engine.reanalysis import plan_reanalysis
from engine.runner import run_evaluation
from engine.settings import resolve_paths
from engine.testsets import load_test_set
from tests.bench.local_speed import _cases
from tests.bench.runner import UNIVERSAL
from tests.loopback_llm import LoopbackLLM, Reply


def _answers(cases: Path) -> dict[str, str]:
    rows = [json.loads(x) for x in cases.read_text(encoding="utf-8").splitlines()]
    return {str(r["query"]): str(r.get("response") or "") for r in rows}


def _responder(answers: dict[str, str]) -> Any:
    def answer(provider: str, body: dict[str, Any]) -> Reply:
        if body.get("model") != "bench-target":
            return Reply.json(UNIVERSAL)  # the drift check's judge
        prompt = json.dumps(body.get("messages", []), ensure_ascii=False)
        for query, response in answers.items():
            if json.dumps(query, ensure_ascii=False)[1:-1] in prompt:
                return Reply.text(response)
        return Reply.text("I do not know.")

    return answer


def _new_truth(cases: Path, out: Path) -> Path:
    rows = []
    for line in cases.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        expected = case.get("expected_answer") or {}
        if isinstance(expected, dict) and expected.get("text"):
            expected["text"] = "As of the latest update: " + str(expected["text"])
        rows.append(json.dumps(case))
    out.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--target-delay", type=float, default=0.25)
    parser.add_argument("--judge-delay", type=float, default=0.2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cases = _cases(folder, args.samples)
        paths = resolve_paths(folder / "home")
        with LoopbackLLM(delay=args.target_delay, responder=_responder(_answers(cases))) as llm:
            os.environ["OPENAI_API_KEY"] = "sk-bench"
            os.environ["OPENAI_BASE_URL"] = llm.url
            config = RunConfig(
                name="bench original", test_set=str(cases), target="openai:bench-target",
                concurrency=16,
            )  # fmt: skip
            started = time.perf_counter()
            original = run_evaluation(config, paths, test_set=load_test_set(cases))
            original_s = time.perf_counter() - started
            calls = llm.count
            truth = _new_truth(cases, folder / "truth.jsonl")
            started = time.perf_counter()
            plan = plan_reanalysis(paths, original.run_id, truth, name=None, series=None)
            again = run_evaluation(plan.config, paths, test_set=load_test_set(plan.test_set))
            reanalysis_s = time.perf_counter() - started
            assert llm.count == calls, "re-analysis called the target"
            print(
                f"reanalysis: {args.samples} samples ({original.errors}/{again.errors} errors); "
                f"original run (target {args.target_delay:g} s/answer at concurrency 16, local "
                f"judge) {original_s:.1f} s, re-analysis {reanalysis_s:.1f} s, no target call: "
                f"ratio {reanalysis_s / original_s:.2f} (goal < 0.5)"
            )
            llm.delay = args.judge_delay
            started = time.perf_counter()
            anchors = anchor_set(paths, "bench", original.run_id, utcnow())
            old = run_config(paths, original.run_id)
            new = JudgeSide(old.model_copy(update={"judge": "openai:bench-judge"}))
            check = check_drift(paths, anchors, JudgeSide(old, original.run_id), new, now=utcnow())
            drift_s = time.perf_counter() - started
            judge_calls = llm.count - calls
            print(
                f"drift: {len(anchors.sample_ids)} anchors re-judged by a loopback judge "
                f"({args.judge_delay:g} s/call, {judge_calls} calls) in {drift_s:.1f} s "
                f"({len(check.shifts)} metrics); ratio to the original run "
                f"{drift_s / original_s:.2f}"
            )


if __name__ == "__main__":
    main()
