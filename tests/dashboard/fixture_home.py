"""A small, hand-chosen warehouse for the dashboard tests: every number a test asserts can be
worked out by hand from the records below. Built through the real lake and ingest.

Runs (oldest first):
- ``rc``  "prompt test" 2026-10-25, two candidates (short, long), acme only
- ``r1``  "week 1"      2026-11-01, acme, beta, gamma
- ``r2``  "week 2"      2026-11-08, acme, beta (one error row), gamma
- ``r3``  "week 3"      2026-11-15, two iterations, acme only

Overview r2 vs r1, by hand:
- acme   accuracy 80 vs 85 (-5), completeness 90 vs 80 (+10), attribution 100 vs 87.5 (+12.5)
- beta   accuracy 60 vs 40 (+20) (beta-q2 failed in r2: no scores)
- gamma  completeness 65 vs 50 (+15): six samples, every one up 10..20 -> beyond noise
In r2, gamma-q1 abstained and gamma-q2 answered nothing (labelled on every sample list).
Overview r3 vs r2: acme accuracy 81 (iterations 80, 82) vs 80 -> +1, two paired samples:
too few for an interval.

Head to head (``pairwise``, as ``compare-runs`` writes it; see ``PAIRWISE``):
- ``CMP1`` r1 (A) vs r2 (B), local rule, 2026-11-09: acme-q1 B, acme-q2 A, beta-q1 B,
  gamma-q1 B, gamma-q2 B, gamma-q3 tie -> acme 1-0-1, beta 0-0-1, gamma 0-1-2, all 1-1-4.
- ``CMP2`` r2 (A) vs r3 (B), an LLM judge, 2026-11-16: acme-q1 B, acme-q2 a tie because the
  two orders disagreed (position bias).
``rc`` stores tiers 90/80/60 in its config: candidate long's accuracy 72.5 is "fair" there
(the default thresholds would say "good"), completeness 50 is "poor" (default "fair").
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from engine.lake import write_part
from engine.models import (
    AttributionRecord,
    ClaimRecord,
    ConversationScoreRecord,
    GraderScoreRecord,
    HighlightRecord,
    PairwiseRecord,
    ResultRecord,
    TurnRecord,
    VerdictRecord,
)
from engine.run.metrics import iteration_metrics
from engine.settings import Paths, resolve_paths
from ingest import ingest
from tests.factories import result_record, run_record

T0 = datetime(2026, 11, 1, 9, 0)

RESPONSE = (
    "Acme Pro costs $20 per month. See https://acme.example/pricing for details. "
    "<script>alert(1)</script> **Acme** support is open on Sundays."
)
"""The response of acme-q1 in r2: untrusted text with HTML and Markdown in it."""


NO_ANSWER: dict[str, dict[str, Any]] = {
    "gamma-q1": {"response": "I do not know the answer to that.", "abstained": True},
    "gamma-q2": {"response": "   "},
}
"""In r2, gamma-q1 abstains and gamma-q2 gives no answer (blank response); scores as usual."""


CITES_SOURCE = {"r1": {"acme-q1": 0.5, "acme-q2": 0.0}, "r2": {"acme-q1": 1.0, "acme-q2": 0.5}}
"""Grader cites-source (0-1) on acme: r1 mean 25, r2 mean 75 (x 100), delta +50."""


JUDGED_R2 = [
    {
        "sample_id": "acme-q1",
        "query": "question acme-q1",
        "judge_faithfulness": 2.0,
        "judge_completeness": 3.0,
        "faithfulness_reasoning": "Adds a discount the context never mentions.",
        "completeness_reasoning": "Lists the price without saying why it fits.",
    },
    {"sample_id": "beta-q1", "query": "question beta-q1", "judge_faithfulness": 5.0,
     "judge_completeness": 5.0},
    {"sample_id": "gamma-q1", "query": "question gamma-q1", "judge_faithfulness": 1.0,
     "judge_completeness": 2.0, "faithfulness_reasoning": "Contradicts the context."},
]  # fmt: skip
"""r2's judge scores as the engine's per-iteration metrics read them: low faithfulness
1 completely false (gamma-q1), 1 mostly false (acme-q1), 0 mixed; 2 completeness failures."""


RC_CONFIG = json.dumps({"analyzer": {"tiers": {"excellent": 90, "good": 80, "fair": 60}}})
"""``rc`` was scored with its own tiers (90/80/60): its 72.5 is fair, not the default good."""


def _span(text: str, part: str) -> tuple[int, int]:
    start = text.index(part)
    return start, start + len(part)


def _results(run_id: str, rows: list[dict[str, Any]], iteration: int = 1) -> list[Any]:
    return [result_record(run_id, iteration=iteration, **row) for row in rows]


def _acme(sample: str, provider: str, tags: list[str], **scores: Any) -> dict[str, Any]:
    return {
        "sample_id": sample,
        "domain": "acme.example",
        "ai_provider": provider,
        "tags": tags,
        "query": f"question {sample}",
        **scores,
    }


CMP1 = "cmp-20261109T090000-aaaaaa"
"""r1 (A) against r2 (B) with the local rule."""
CMP2 = "cmp-20261116T090000-bbbbbb"
"""r2 (A) against r3 (B) with an LLM judge."""

PAIRWISE: list[tuple[str, str, str, str, str, str | None]] = [
    (CMP1, "r1", "r2", "acme-q1", "acme.example", "b"),
    (CMP1, "r1", "r2", "acme-q2", "acme.example", "a"),
    (CMP1, "r1", "r2", "beta-q1", "beta.example", "b"),
    (CMP1, "r1", "r2", "gamma-q1", "gamma.example", "b"),
    (CMP1, "r1", "r2", "gamma-q2", "gamma.example", "b"),
    (CMP1, "r1", "r2", "gamma-q3", "gamma.example", "tie"),
    (CMP2, "r2", "r3", "acme-q1", "acme.example", "b"),
    (CMP2, "r2", "r3", "acme-q2", "acme.example", None),  # orders disagree: a tie
]
"""(comparison, run A, run B, sample, domain, winner); None: the two orders disagreed."""


def _pairwise_records() -> dict[str, list[PairwiseRecord]]:
    out: dict[str, list[PairwiseRecord]] = {}
    for cid, run_a, run_b, sample, domain, winner in PAIRWISE:
        local = cid == CMP1
        out.setdefault(cid, []).append(
            PairwiseRecord(
                comparison_id=cid,
                run_a=run_a,
                run_b=run_b,
                iteration=1,
                sample_id=sample,
                domain=domain,
                winner=winner or "tie",
                consistent=winner is not None,
                a_first=winner or "a",
                b_first=winner or "b",
                reason="fixture judgment",
                judge="local" if local else "openai:gpt-4o-mini",
                compared_at=T0 + timedelta(days=8 if local else 15),
            )
        )
    return out


def write_fixture_lake(paths: Paths) -> None:
    """Write the fixture records to the lake of ``paths`` (not ingested)."""
    lake = paths.lake
    # The lake's protocol: detail parts first, the results part of the same samples last
    # (ingest loads a detail part once a later results part commits it).
    results_parts: list[tuple[str, int, list[ResultRecord]]] = []
    runs = {
        "rc": ("prompt test", T0 - timedelta(days=7), 1),
        "r1": ("week 1", T0, 1),
        "r2": ("week 2", T0 + timedelta(days=7), 1),
        "r3": ("week 3", T0 + timedelta(days=14), 2),
    }
    for run_id, (name, started, iterations) in runs.items():
        write_part(
            lake,
            "runs",
            run_id,
            0,
            [
                run_record(
                    run_id,
                    started,
                    name=name,
                    iterations=iterations,
                    test_set=str(paths.test_sets / "fixture.jsonl"),
                    config=RC_CONFIG if run_id == "rc" else "{}",
                )
            ],
        )

    rc = []
    for candidate, accs in (("short", (60.0, 70.0)), ("long", (80.0, 65.0))):
        for sample, acc in zip(("acme-q1", "acme-q2"), accs, strict=True):
            rc.append(
                result_record(
                    "rc",
                    sample,
                    candidate=candidate,
                    domain="acme.example",
                    query=f"question {sample}",
                    accuracy=acc,
                    completeness=50.0,
                    attribution=75.0,
                )
            )
    results_parts.append(("rc", 1, rc))

    gamma = [f"gamma-q{i}" for i in range(1, 7)]
    r1 = _results(
        "r1",
        [
            _acme(
                "acme-q1", "gpt-x", ["pricing"], accuracy=80.0, completeness=60.0, attribution=75.0
            ),
            _acme(
                "acme-q2",
                "claude",
                ["support"],
                accuracy=90.0,
                completeness=100.0,
                attribution=100.0,
            ),
            {
                "sample_id": "beta-q1",
                "domain": "beta.example",
                "tags": ["pricing"],
                "query": "question beta-q1",
                "accuracy": 40.0,
                "completeness": 50.0,
                "attribution": 0.0,
            },
        ]
        + [
            {
                "sample_id": s,
                "domain": "gamma.example",
                "query": f"question {s}",
                "accuracy": 70.0,
                "completeness": 50.0,
                "attribution": 0.0,
            }
            for s in gamma
        ],
    )
    results_parts.append(("r1", 1, r1))

    r2 = _results(
        "r2",
        [
            _acme(
                "acme-q1",
                "gpt-x",
                ["pricing"],
                accuracy=90.0,
                completeness=80.0,
                attribution=100.0,
                response=RESPONSE,
                coverage_percent=42.5,
                judge_faithfulness=4.0,
                judge_completeness=3.0,
                passed=False,
                overall=3.5,
                judge_reasoning="States the price; wrong about Sundays.",
                claim_faithfulness=0.5,
            ),
            _acme(
                "acme-q2",
                "claude",
                ["support"],
                accuracy=70.0,
                completeness=100.0,
                attribution=100.0,
            ),
            {
                "sample_id": "beta-q1",
                "domain": "beta.example",
                "tags": ["pricing"],
                "query": "question beta-q1",
                "accuracy": 60.0,
                "completeness": 50.0,
                "attribution": 50.0,
            },
            {
                "sample_id": "beta-q2",
                "domain": "beta.example",
                "query": "question beta-q2",
                "accuracy": None,
                "completeness": None,
                "attribution": None,
                "error": "judge timed out",
            },
        ]
        + [
            {
                "sample_id": s,
                "domain": "gamma.example",
                "query": f"question {s}",
                "accuracy": 70.0,
                "completeness": 60.0 + 2 * i,
                "attribution": 0.0,
                **NO_ANSWER.get(s, {}),
            }
            for i, s in enumerate(gamma)
        ],
    )
    results_parts.append(("r2", 1, r2))

    for iteration, bump in ((1, 0.0), (2, 2.0)):
        r3 = _results(
            "r3",
            [
                _acme(
                    "acme-q1",
                    "gpt-x",
                    ["pricing"],
                    accuracy=90.0 + bump,
                    completeness=80.0,
                    attribution=100.0,
                ),
                _acme(
                    "acme-q2",
                    "claude",
                    ["support"],
                    accuracy=70.0 + bump,
                    completeness=100.0,
                    attribution=100.0,
                ),
            ],
            iteration=iteration,
        )
        results_parts.append(("r3", iteration, r3))

    # Details of acme-q1 in r2 (the Sample page) and claims of acme-q1 in r1 and r2.
    key = {"run_id": "r2", "iteration": 1, "sample_id": "acme-q1"}
    price = _span(RESPONSE, "Acme Pro costs $20 per month.")
    script = _span(RESPONSE, "<script>alert(1)</script> **Acme** support is open on Sundays.")
    url = _span(RESPONSE, "https://acme.example/pricing")
    brand = _span(RESPONSE, "**Acme**")
    write_part(
        lake,
        "highlights",
        "r2",
        1,
        [
            HighlightRecord(
                **key,
                response_start=price[0],
                response_end=price[1],
                chunk_id="p1#0",
                page_url="https://acme.example/pricing",
                matched_text="Acme Pro is $20 a month, billed monthly.",
                similarity=0.91,
            ),
            HighlightRecord(
                **key,
                response_start=script[0],
                response_end=script[1],
                chunk_id=None,
                page_url=None,
                matched_text=None,
                similarity=0.22,
            ),
        ],
    )
    write_part(
        lake,
        "attributions",
        "r2",
        1,
        [
            AttributionRecord(
                **key,
                type="url",
                matched_text=RESPONSE[url[0] : url[1]],
                response_start=url[0],
                response_end=url[1],
            ),
            AttributionRecord(
                **key,
                type="brand",
                matched_text="Acme",
                response_start=brand[0] + 2,
                response_end=brand[1] - 2,
            ),
            AttributionRecord(
                run_id="r2",
                iteration=1,
                sample_id="acme-q2",
                type="domain",
                matched_text="acme.example",
                response_start=0,
                response_end=12,
            ),
        ],
    )
    write_part(
        lake,
        "verdicts",
        "r2",
        1,
        [
            VerdictRecord(
                **key,
                claim_index=0,
                claim_text="Acme Pro costs $20 per month.",
                verdict="SUPPORTED",
                evidence="Acme Pro is $20 a month.",
                response_start=price[0],
                response_end=price[1],
            ),
            VerdictRecord(
                **key,
                claim_index=1,
                claim_text="Acme support is open on Sundays.",
                verdict="CONTRADICTED",
                evidence="Support is closed on Sundays.",
                rule="negation",
                response_start=script[0],
                response_end=script[1],
            ),
        ],
    )
    write_part(
        lake,
        "grader_scores",
        "r2",
        1,
        [
            GraderScoreRecord(
                **key, grader="mentions-price", score=1.0, passed=True, reason="the price is stated"
            )
        ],
    )
    for run_id, scores in CITES_SOURCE.items():
        write_part(
            lake,
            "grader_scores",
            run_id,
            1,
            [
                GraderScoreRecord(
                    run_id=run_id,
                    iteration=1,
                    sample_id=sample_id,
                    grader="cites-source",
                    score=score,
                    passed=score >= 0.5,
                    reason="checked",
                )
                for sample_id, score in scores.items()
            ],
        )
    for run_id, found_price in (("r1", False), ("r2", True)):
        write_part(
            lake,
            "claims",
            run_id,
            1,
            [
                ClaimRecord(
                    run_id=run_id,
                    iteration=1,
                    sample_id="acme-q1",
                    claim_id="c1",
                    claim_text="Acme Pro costs $20 per month.",
                    importance="required",
                    found=found_price,
                    evidence="Acme Pro costs $20 per month." if found_price else None,
                    similarity=0.9 if found_price else 0.4,
                    response_start=price[0] if found_price else None,
                    response_end=price[1] if found_price else None,
                ),
                ClaimRecord(
                    run_id=run_id,
                    iteration=1,
                    sample_id="acme-q1",
                    claim_id="c2",
                    claim_text="Support is closed on Sundays.",
                    importance="expected",
                    found=False,
                    similarity=0.3,
                ),
            ],
        )
    write_conversation_parts(lake)
    for run_id, iteration, rows in results_parts:
        write_part(lake, "results", run_id, iteration, rows)
    for cid, records in _pairwise_records().items():
        write_part(lake, "pairwise", cid, 0, records)
    write_part(
        lake,
        "iteration_metrics",
        "r2",
        1,
        [iteration_metrics("r2", 1, JUDGED_R2, T0 + timedelta(days=7, hours=1))],
    )


CONVERSATION_TURNS = [
    # turn, role, content, expected, expectation score, passed, relevant, in_role, attrition
    (1, "user", "My parcel **never** came, order #12345", "", None, None, None, None, None),
    (2, "assistant", "Sorry! Order #12345 left on May 2, see [tracking](https://evil.example).",
     "Acknowledge the order and give its status", 0.9, True, True, True, False),
    (3, "user", "It is still not here", "", None, None, None, None, None),
    (4, "assistant", "What is your order number?", "Offer a refund or a reshipment",
     0.2, False, True, True, True),
]  # fmt: skip
"""The fixture's one conversation (run r1): hostile Markdown in what was said."""


def write_conversation_parts(lake: Path) -> None:
    """``turns`` and ``conversation_scores`` of conversation ``parcel`` in run r1 (written
    before r1's results part, which commits them). Hand-chosen: expectation scores 0.9 and
    0.2, one attrition at turn 4, so retention 1/2, expectation pass rate 1/2."""
    key = {"run_id": "r1", "iteration": 1, "sample_id": "parcel"}
    rows = []
    for (
        turn,
        role,
        content,
        expected,
        score,
        passed,
        relevant,
        in_role,
        attrition,
    ) in CONVERSATION_TURNS:
        graded = role == "assistant"
        rows.append(
            TurnRecord(
                **key, turn=turn, role=role, content=content, expected=expected,
                generated=graded, window_start=1 if graded else None, expectation_score=score,
                expectation_passed=passed, relevant=relevant, in_role=in_role,
                attrition=attrition,
                reason="asks again for the order number" if attrition else "",
            )
        )  # fmt: skip
    write_part(lake, "turns", "r1", 1, rows)
    summary = ConversationScoreRecord(
        **key, scenario="Lost parcel <b>urgent</b>", chatbot_role="You are Acme's support agent",
        turns=4, assistant_turns=2, window_size=5, expectation_mean=0.55,
        expectation_pass_rate=0.5, relevancy=1.0, knowledge_retention=0.5, completeness=0.5,
        role_adherence=1.0,
        intents=json.dumps([{"intent": "find the parcel", "satisfied": False},
                            {"intent": "learn the status", "satisfied": True}]),
        reason="knowledge retention: turn 4 asks for the order number given at turn 1",
        judge="local",
    )  # fmt: skip
    write_part(lake, "conversation_scores", "r1", 1, [summary])


TEST_SET = [
    {
        "id": "acme-q1",
        "domain": "acme.example",
        "query": "How much is Acme Pro?",
        "response": "Acme Pro costs $20 per month, see acme.example/pricing.",
        "ai_provider": "gpt-x",
        "expected_answer": {
            "text": "Acme Pro is $20 a month.",
            "claims": [{"id": "c1", "text": "Acme Pro costs $20 per month."}],
        },
        "ground_truth": [
            {
                "chunk_id": "p1#0",
                "page_url": "https://acme.example/pricing",
                "text": "Acme Pro is $20 a month, billed monthly.",
            },
            {
                "chunk_id": "p2#0",
                "page_url": "https://acme.example/support",
                "text": "Support is closed on Sundays.",
            },
        ],
        "brand_names": ["Acme"],
        "tags": ["pricing"],
    },
    {
        "id": "acme-q2",
        "domain": "acme.example",
        "query": "When is Acme support open?",
        "response": "Acme support is open Monday to Saturday.",
        "ai_provider": "claude",
        "expected_answer": {
            "text": "Support is closed on Sundays.",
            "claims": [{"id": "c1", "text": "Support is closed on Sundays."}],
        },
        "ground_truth": [
            {
                "chunk_id": "p2#0",
                "page_url": "https://acme.example/support",
                "text": "Support is closed on Sundays.",
            },
        ],
        "tags": ["support"],
    },
]
"""The test set the fixture runs point at (``<home>/test-sets/fixture.jsonl``)."""


def build_fixture_home(root: Path) -> Paths:
    """An evalhouse home with the fixture lake ingested into its warehouse."""
    paths = resolve_paths(root)
    write_fixture_lake(paths)
    paths.test_sets.mkdir(parents=True, exist_ok=True)
    (paths.test_sets / "fixture.jsonl").write_text(
        "".join(json.dumps(case) + "\n" for case in TEST_SET), encoding="utf-8"
    )
    ingest(paths)
    return paths


def build_empty_home(root: Path) -> Paths:
    """A home whose warehouse exists but holds no runs."""
    paths = resolve_paths(root)
    paths.lake.mkdir(parents=True, exist_ok=True)
    ingest(paths)
    return paths
