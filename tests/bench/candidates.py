"""Benchmark: the share of a two-candidate run's wall time spent in graders (goal < 10%).

A real run (``run_evaluation`` with ``build_components``: real analyzer, local judge,
local embedder) of two ``llm_prompt`` candidates of one family over N cases (default
200, so 2N answers), the loopback chat server answering as the target with no delay,
graded by 4 deterministic graders (exact-match, contains, regex, json-schema) and one
built-in (accuracy). Grading time is measured inside the run by the runner's
``Components.grade_timer`` hook around every sample's grading, not estimated.

Run: ``.venv/bin/python -m tests.bench.candidates [--samples N] [--concurrency C]``
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from engine.models import RunConfig
from engine.runner import build_components, run_evaluation
from engine.settings import resolve_paths
from engine.testsets import load_test_set
from tests.loopback_llm import LoopbackLLM, Reply

GRADERS = {
    "exact.yaml": "type: exact-match\noptions: {case: insensitive}\n",
    "mentions.yaml": (
        "type: contains\noptions: {values: [plan, dollars, month], mode: all, case: insensitive}\n"
    ),
    "cites.yaml": "type: regex\noptions:\n  pattern: '\\[Source: [^\\]]+\\]'\n",
    "json.yaml": (
        "type: json-schema\noptions:\n  schema: {type: object, required: [answer]}\n"
        "  allow_code_fence: true\n"
    ),
}
CANDIDATES = {
    "base.md": "---\nname: Plain\nmodel: loopback-chat\n---\nYou answer plainly.\n",
    "cite.md": (
        "---\nname: Citing\nmodel: loopback-chat\nuser_template: 'Question: {{input}}'\n---\n"
        "You always cite your source as [Source: page].\n"
    ),
}
GRADER_IDS = ["exact", "mentions", "cites", "json", "accuracy"]


def write_project(root: Path) -> Path:
    """Graders and the two candidates ``pricing`` and ``pricing-cite``."""
    (root / "graders").mkdir(parents=True)
    for name, text in GRADERS.items():
        (root / "graders" / name).write_text(text, encoding="utf-8")
    family = root / "candidates" / "pricing"
    family.mkdir(parents=True)
    for name, text in CANDIDATES.items():
        (family / name).write_text(text, encoding="utf-8")
    return root


def write_cases(path: Path, n: int) -> Path:
    """``n`` pricing questions with a reference answer, one claim and one passage."""
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(n):
            price = i % 90 + 10
            case = {
                "id": f"b{i:05d}",
                "domain": "acme.example",
                "query": f"What does plan {i} cost per month?",
                "expected_answer": {
                    "text": f"Plan {i} costs {price} dollars a month.",
                    "claims": [{"id": "c1", "text": f"Plan {i} costs {price} dollars."}],
                },
                "ground_truth": [
                    {
                        "chunk_id": "p1#0",
                        "page_url": "https://acme.example/pricing",
                        "text": f"Plan {i} is priced at {price} dollars per month.",
                    }
                ],
            }
            handle.write(json.dumps(case) + "\n")
    return path


def respond(provider: str, body: dict[str, Any]) -> Reply:
    """Answers from the question; the citing candidate adds a source."""
    messages = body.get("messages") or []
    system = messages[0]["content"] if len(messages) == 2 else ""
    question = messages[-1]["content"].removeprefix("Question: ")
    plan = question.split()[3]
    price = int(plan) % 90 + 10
    text = f"Plan {plan} costs {price} dollars per month."
    if "cite" in system:
        text += " [Source: acme.example/pricing]"
    return Reply.text(text)


def main() -> None:
    """Run the benchmark and print one line per figure."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=200, help="cases (answers = 2x)")
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, LoopbackLLM(responder=respond) as llm:
        root = Path(tmp)
        os.environ["OPENAI_BASE_URL"] = llm.url
        os.environ["OPENAI_API_KEY"] = "sk-bench"
        project = write_project(root / "project")
        test_set = load_test_set(write_cases(root / "cases.jsonl", args.samples))
        paths = resolve_paths(root / "home")
        config = RunConfig(
            name="bench-candidates",
            test_set=str(test_set.path),
            concurrency=args.concurrency,
            extra={
                "project": str(project),
                "candidates": ["pricing", "pricing-cite"],
                "graders": GRADER_IDS,
            },
        )
        components = build_components(config, paths)
        grading: list[float] = []
        components.grade_timer = grading.append
        started = time.perf_counter()
        outcome = run_evaluation(config, paths, test_set=test_set, components=components)
        wall = time.perf_counter() - started
    answers = outcome.samples
    assert outcome.errors == 0, f"{outcome.errors} error rows"
    assert len(grading) == answers == 2 * args.samples, (len(grading), answers)
    assert llm.count == answers
    graded = sum(grading)
    print(f"answers (2 candidates x {args.samples} cases): {answers}")
    print(f"graders per answer: {len(GRADER_IDS)} (4 deterministic + accuracy)")
    print(f"run wall time: {wall:.2f} s ({answers / wall:.1f} answers/s)")
    print(f"time in graders: {graded * 1000:.1f} ms ({graded / answers * 1e6:.0f} us per answer)")
    print(f"share of wall time in graders: {graded / wall:.2%} (goal < 10%)")


if __name__ == "__main__":
    main()
