"""Retrieval metrics: the formulas against hand-computed values and an independent numpy
reference, which passages count as relevant (ids, URLs, texts), and the peer formats and
HTTP replies whose ids feed them."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from engine.models import GroundTruthChunk, TestCase
from engine.scoring.retrieval import (
    match_keys,
    match_texts,
    normalised_id,
    passage_id,
    retrieval_metrics,
    retrieval_task,
)
from engine.testsets import case_hash, load_test_set
from tests.bench.retrieval import reference_metrics

KS = (1, 3, 5, 10)
L3 = 1 / math.log2(3)  # the gain of rank 2
L6 = 1 / math.log2(6)  # the gain of rank 5


def _case(**fields: object) -> TestCase:
    return TestCase.model_validate({"id": "q", "query": "q?", **fields})


def _ranks(case: TestCase) -> list[int | None]:
    task = retrieval_task(case)
    assert task is not None
    return [f.rank for f in match_keys(task)]


def test_hand_computed_values_with_duplicates_and_k_beyond_the_list() -> None:
    # d1 at rank 2 (again at 4: a duplicate is not relevant twice), d2 at rank 5; the
    # relevant list names d1 twice (counted once).
    case = _case(
        retrieved_context_ids=["d3", "d1", "d7", "d1", "d2"],
        relevant_context_ids=["d1", "d2", "d1"],
    )
    ranks = _ranks(case)
    assert ranks == [2, 5]
    got = retrieval_metrics(ranks, KS)
    want = {
        "mrr": 0.5,
        "hit@1": 0.0, "precision@1": 0.0, "recall@1": 0.0, "ndcg@1": 0.0,
        "hit@3": 1.0, "precision@3": 1 / 3, "recall@3": 0.5, "ndcg@3": L3 / (1 + L3),
        "hit@5": 1.0, "precision@5": 0.4, "recall@5": 1.0, "ndcg@5": (L3 + L6) / (1 + L3),
        # k = 10 beyond a list of 5: precision still divides by k, NDCG as at 5
        "hit@10": 1.0, "precision@10": 0.2, "recall@10": 1.0, "ndcg@10": (L3 + L6) / (1 + L3),
    }  # fmt: skip
    assert got.keys() == want.keys()
    for metric, value in want.items():
        assert got[metric] == pytest.approx(value), metric
    assert got["ndcg@3"] == pytest.approx(0.386853, abs=1e-6)
    assert got["ndcg@5"] == pytest.approx(0.624051, abs=1e-6)


def test_perfect_miss_and_no_relevant_passage() -> None:
    assert retrieval_metrics([1, 2, 3], (3,)) == {
        "mrr": 1.0, "hit@3": 1.0, "precision@3": 1.0, "recall@3": 1.0, "ndcg@3": 1.0
    }  # fmt: skip
    missed = retrieval_metrics([None, None], (1, 5))
    assert missed["mrr"] == 0.0 and set(missed.values()) == {0.0}
    assert retrieval_metrics([], KS) == {}  # no relevant passage: nothing, not zeros
    # an empty ranking against relevant passages is a retrieval that found nothing
    assert _ranks(_case(retrieved_context_ids=[], relevant_context_ids=["a"])) == [None]


def test_more_relevant_than_k_caps_the_ideal_ranking() -> None:
    got = retrieval_metrics([1, None, None, None], (1, 3))
    assert (
        got["ndcg@1"] == 1.0
        and got["recall@1"] == 0.25
        and got["ndcg@3"] == pytest.approx(1 / (1 + L3 + 0.5))
    )


@pytest.mark.parametrize("seed", range(20))
def test_agrees_with_a_numpy_reference_on_random_rankings(seed: int) -> None:
    rng = np.random.default_rng(seed)
    pool = [f"d{i}" for i in range(30)]
    retrieved = list(rng.choice(pool, size=int(rng.integers(0, 15)), replace=True))
    relevant = list(rng.choice(pool, size=int(rng.integers(1, 8)), replace=False))
    case = _case(retrieved_context_ids=retrieved, relevant_context_ids=relevant)
    ours = retrieval_metrics(_ranks(case), KS)
    theirs = reference_metrics(retrieved, relevant, KS)
    assert ours.keys() == theirs.keys()
    for metric in ours:
        assert ours[metric] == pytest.approx(theirs[metric], abs=1e-12), metric


def test_ground_truth_ids_then_urls_and_no_retrieval_data() -> None:
    truth = [
        {"chunk_id": "p1#0", "page_url": "https://Acme.example/pricing/", "text": "Pro: $20."},
        {"chunk_id": "p2#0", "page_url": "https://acme.example/support", "text": "Closed Sun."},
    ]
    by_id = _case(ground_truth=truth, retrieved_context_ids=["x", "p2#0", "p1#0"])
    assert _ranks(by_id) == [3, 2]
    by_url = _case(
        ground_truth=truth,
        retrieved_context_ids=["https://acme.example/blog", "https://acme.example/pricing#plans"],
    )
    task = retrieval_task(by_url)
    assert task is not None and task.by == "url"
    assert [f.rank for f in match_keys(task)] == [2, None]
    assert normalised_id("HTTPS://ACME.example:443/a/?") == "https://acme.example/a"
    assert retrieval_task(_case(ground_truth=truth)) is None  # no ranking
    assert retrieval_task(_case(retrieved_context_ids=["a"])) is None  # no ground truth
    # ground truth copied from the case's own context says nothing about retrieval
    copied = _case(context=["a"], ground_truth=[{"chunk_id": "ctx#0", "text": "a"}])
    assert retrieval_task(copied) is None


def _bag_similarity(left: Sequence[str], right: Sequence[str]) -> npt.NDArray[np.float32]:
    """Jaccard of word sets: a deterministic stand-in for the embedder's cosine."""
    out = np.zeros((len(left), len(right)), dtype=np.float32)
    for i, a in enumerate(left):
        for j, b in enumerate(right):
            x, y = set(a.lower().split()), set(b.lower().split())
            out[i, j] = len(x & y) / max(1, len(x | y))
    return out


def test_text_fallback_equal_texts_first_then_similarity_at_the_threshold() -> None:
    case = _case(
        context=[
            "Unrelated passage about the weather in spring.",
            "acme  PRO costs $20 per month.",  # equal once case and spaces are normalised
            "Support is closed on Sundays. And holidays too",  # a re-cut passage
            "Acme Pro costs $20 per month.",  # a duplicate: not relevant twice
        ],
        ground_truth=[
            {"chunk_id": "p1#0", "text": "Acme Pro costs $20 per month."},
            {"chunk_id": "p2#0", "text": "Support is closed on Sundays."},
            {"chunk_id": "p3#0", "text": "Refunds within 30 days."},
        ],
    )
    task = retrieval_task(case)
    assert task is not None and task.by == "text"
    found = match_texts(task, _bag_similarity, 0.5)
    assert [(f.rank, f.how) for f in found] == [(2, "text"), (3, "embedding"), (None, "text")]
    assert found[1].similarity == pytest.approx(5 / 8)
    # above every similarity: only the equal text matches; no embedder: the same
    assert [f.rank for f in match_texts(task, _bag_similarity, 0.9)] == [2, None, None]
    assert [f.rank for f in match_texts(task, None, 0.5)] == [2, None, None]


def test_text_fallback_asks_the_embedder_only_for_what_is_missing() -> None:
    asked: list[int] = []

    def similarity(left: Sequence[str], right: Sequence[str]) -> npt.NDArray[np.float32]:
        asked.append(len(right))
        return _bag_similarity(left, right)

    case = _case(context=["b", "a"], ground_truth=[{"chunk_id": "1", "text": "A"}])
    task = retrieval_task(case)
    assert task is not None
    assert [f.rank for f in match_texts(task, similarity, 0.5)] == [2] and asked == []


def test_a_case_s_ids_must_match_its_context_and_keep_old_hashes() -> None:
    with pytest.raises(ValueError, match="2 ids for 1 context passages"):
        _case(context=["a"], retrieved_context_ids=["x", "y"])
    plain = _case(context=["a"])
    # the hash of a case written before the new fields existed does not change
    before = plain.model_dump(mode="json")
    for later in ("retrieved_context_ids", "relevant_context_ids", "tools_called"):
        del before[later]
    for later in ("expected_tools", "expected_tools_ordered", "trajectory"):
        before.pop(later, None)
    blob = json.dumps(before, sort_keys=True, ensure_ascii=False).encode("utf-8")
    assert case_hash(plain) == hashlib.sha256(blob).hexdigest()
    assert case_hash(plain) != case_hash(_case(context=["a"], retrieved_context_ids=["x"]))


def test_peer_formats_feed_the_id_fields(tmp_path: Path) -> None:
    ragas = tmp_path / "ragas.jsonl"
    row = {
        "user_input": "How much is Pro?",
        "response": "Pro costs $20.",
        "retrieved_contexts": ["Blog post.", "Pro: $20 a month."],
        "retrieved_context_ids": ["blog-1", 42],
        "reference": "$20 per month.",
        "reference_contexts": ["Pro: $20 a month."],
        "reference_context_ids": ["42"],
    }
    ragas.write_text(json.dumps(row) + "\n", encoding="utf-8")
    (case,) = load_test_set(ragas).cases
    assert case.retrieved_context_ids == ("blog-1", "42")
    assert case.relevant_context_ids == ("42",)
    assert "retrieved_context_ids" not in case.metadata
    assert _ranks(case) == [2]
    phoenix = tmp_path / "phoenix.jsonl"
    example = {
        "id": "ex1",
        "input": {
            "question": "When is support open?",
            "documents": [
                {"id": "doc-9", "content": "Support: weekdays 9-5."},
                {"metadata": {"url": "https://acme.example/support"}, "text": "Closed Sundays."},
            ],
        },
        "output": {"answer": "Weekdays."},
        "metadata": {},
    }
    phoenix.write_text(json.dumps(example) + "\n", encoding="utf-8")
    (item,) = load_test_set(phoenix).cases
    assert item.context == ("Support: weekdays 9-5.", "Closed Sundays.")
    assert item.retrieved_context_ids == ("doc-9", "https://acme.example/support")
    assert passage_id({"text": "no id"}) is None


def test_ground_truth_chunk_model_is_unchanged() -> None:
    # the public format keeps its names: ground truth chunks still need an id and a text
    assert set(GroundTruthChunk.model_fields) == {"chunk_id", "page_url", "text"}
