"""Speed without changed results: one embedding store per run, the local judge off the loop.

Real parts only: the local MiniLM embedder, the real analyzer and local judge, real runs
writing a real lake. A counting subclass of the local embedder is put where the run's
embedder factory builds it, so the counts are those of the real run path.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

import engine.embedders.factory as factory
from engine.embedders.base import EmbedderError, Vectors
from engine.embedders.local import LocalEmbedder
from engine.embedders.store import EmbeddingStore
from engine.judges.local.judge import LocalJudge
from engine.lake import read_table
from engine.models import AnalyzerConfig, RunConfig, SampleKey, TestCase
from engine.runner import build_components, run_evaluation
from engine.scorers.base import BaseScorer, SampleInput, ScoreOutcome
from engine.scoring.analyzer import ResponseAnalyzer
from engine.scoring.judging import judge_sample
from engine.settings import Paths, resolve_paths
from engine.testsets import load_test_set
from engine.verifier.choice import build_verifier


class CountingEmbedder(LocalEmbedder):
    """The real local embedder, counting every text it embeds and on which thread."""

    texts: ClassVar[Counter[str]] = Counter()
    calls: ClassVar[list[int]] = []
    threads: ClassVar[set[str]] = set()
    lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> Vectors:
        with self.lock:
            CountingEmbedder.texts.update(texts)
            CountingEmbedder.calls.append(len(texts))
            CountingEmbedder.threads.add(threading.current_thread().name)
        return super().embed(texts)

    @classmethod
    def reset(cls) -> None:
        cls.texts, cls.calls, cls.threads = Counter(), [], set()


@pytest.fixture(scope="module")
def local_model() -> LocalEmbedder:
    embedder = LocalEmbedder()
    try:
        embedder.load()
    except EmbedderError as exc:  # pragma: no cover - the package is a dependency
        pytest.fail(f"the local embedder must be installed: {exc}")
    return embedder


def _demo_cases(folder: Path, n: int) -> Path:
    """``n`` cases of the demo's first week (recorded answers: answering costs nothing)."""
    from engine.demo import build_weekly_test_sets

    _, path, _ = build_weekly_test_sets(folder / "weeks", weeks=1)[0]
    lines = path.read_text(encoding="utf-8").splitlines()[:n]
    out = folder / "cases.jsonl"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def _run(tmp_path: Path, n: int, *, name: str = "speed", extra: Any = None) -> tuple[Paths, str]:
    path = _demo_cases(tmp_path, n)
    paths = resolve_paths(tmp_path / "home")
    config = RunConfig(name=name, test_set=str(path), max_failed_fraction=1.0)
    components = build_components(config, paths)
    if extra is not None:
        components.scorers.append(extra)
    out = run_evaluation(config, paths, test_set=load_test_set(path), components=components)
    assert out.samples == n
    return paths, out.run_id


# --------------------------------------------------------------------------- the store


class ListEmbedder:
    """A tiny deterministic embedder that records its calls."""

    name = "list:test"
    default_threshold = 0.5

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        rows = [[float(len(t)), float(sum(map(ord, t)) % 97), 1.0] for t in texts]
        matrix = np.asarray(rows, dtype=np.float32)
        return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def test_the_store_embeds_each_text_once_in_one_call_per_request() -> None:
    inner = ListEmbedder()
    store = EmbeddingStore(inner)
    first = store.embed(["a b", "c", "a b"])
    assert inner.calls == [["a b", "c"]]
    assert np.array_equal(first[0], first[2])
    again = store.embed(["c", "d", "a b"])
    assert inner.calls == [["a b", "c"], ["d"]]
    assert np.array_equal(again[0], first[1]) and np.array_equal(again[2], first[0])
    store.embed(["d", "c"])
    assert len(inner.calls) == 2 and store.embedded == 3 and store.calls == 2
    assert store.name == "list:test" and store.default_threshold == 0.5


def test_the_store_forgets_least_recently_used_texts_beyond_its_capacity() -> None:
    inner = ListEmbedder()
    store = EmbeddingStore(inner, capacity=2)
    whole = store.embed(["a", "b", "c"])  # one request larger than the capacity
    assert whole.shape == (3, 3)
    assert "a" not in store and "b" in store and "c" in store
    store.embed(["b", "a"])
    assert inner.calls[-1] == ["a"]


def test_a_wrong_shape_from_the_embedder_is_an_embedder_error() -> None:
    class Short(ListEmbedder):
        def embed(self, texts: Sequence[str]) -> Vectors:
            return super().embed(texts)[:1]

    with pytest.raises(EmbedderError, match="2 texts"):
        EmbeddingStore(Short()).embed(["x", "y"])


# --------------------------------------------------------------------------- a real run


def test_a_run_embeds_no_text_twice_and_in_large_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, local_model: LocalEmbedder
) -> None:
    CountingEmbedder.reset()
    monkeypatch.setattr(factory, "LocalEmbedder", CountingEmbedder)
    _run(tmp_path, 20)
    twice = {t: n for t, n in CountingEmbedder.texts.items() if n > 1}
    assert twice == {}
    calls, texts = len(CountingEmbedder.calls), sum(CountingEmbedder.calls)
    # 20 samples at concurrency 5: batches of up to 5 samples, the analyzer and the local
    # judge each ask about twice per batch; one call per sample would be 20+ calls.
    assert texts > 100
    assert texts / calls > 10, CountingEmbedder.calls


def test_a_warm_run_embeds_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, local_model: LocalEmbedder
) -> None:
    monkeypatch.setattr(factory, "LocalEmbedder", CountingEmbedder)
    CountingEmbedder.reset()
    _run(tmp_path, 8, name="cold")
    assert CountingEmbedder.texts
    CountingEmbedder.reset()
    _run(tmp_path, 8, name="warm")  # same home: the on-disk cache has every vector
    assert CountingEmbedder.texts == Counter()


def test_the_event_loop_never_embeds_nor_judges_and_stays_responsive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, local_model: LocalEmbedder
) -> None:
    """The run's loop is the thread that calls ``run_evaluation``; a probe scorer running
    on that loop measures how late a 5 ms sleep wakes up while samples are scored."""
    CountingEmbedder.reset()
    monkeypatch.setattr(factory, "LocalEmbedder", CountingEmbedder)
    judged_on: set[str] = set()
    real_judged, real_many = LocalJudge.judged, LocalJudge.judged_many

    def judged(self: LocalJudge, claim: str, context: Sequence[str], prefix: str = "") -> Any:
        judged_on.add(threading.current_thread().name)
        return real_judged(self, claim, context, prefix)

    def judged_many(
        self: LocalJudge, claims: Sequence[str], context: Sequence[str], prefix: str = ""
    ) -> Any:
        judged_on.add(threading.current_thread().name)
        return real_many(self, claims, context, prefix)

    monkeypatch.setattr(LocalJudge, "judged", judged)
    monkeypatch.setattr(LocalJudge, "judged_many", judged_many)
    probe = LagProbe()
    _run(tmp_path, 40, extra=probe)
    loop_thread = threading.current_thread().name
    assert judged_on and loop_thread not in judged_on
    assert CountingEmbedder.threads and loop_thread not in CountingEmbedder.threads
    lags = sorted(probe.lags)
    assert len(lags) > 50
    # Measured at load average 23 on 2 cores, 40 samples: the 99th percentile of the lag
    # was 2.8 s while the local judge computed on the loop, 0.065 s since.
    assert lags[int(0.99 * len(lags))] < 0.5, lags[-10:]


class LagProbe(BaseScorer):
    """Scores nothing; while the run scores, measures how late the loop wakes a sleeper."""

    name = "lag-probe"

    def __init__(self) -> None:
        self.lags: list[float] = []
        self._task: asyncio.Task[None] | None = None

    async def score(self, sample: SampleInput) -> ScoreOutcome:
        if self._task is None:
            self._task = asyncio.create_task(self._measure())
        return ScoreOutcome()

    async def _measure(self) -> None:
        while True:
            started = time.perf_counter()
            await asyncio.sleep(0.005)
            self.lags.append(time.perf_counter() - started - 0.005)

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None


# --------------------------------------------------------------------------- same results


def _expected(cases: list[TestCase], model: LocalEmbedder) -> dict[str, Any]:
    """Every sample scored on its own, the way it was scored before the store: a fresh
    analyzer and local judge per sample, no cache, no batch, on this thread."""
    out: dict[str, Any] = {}
    verifier = build_verifier(RunConfig(name="x", test_set="x").verifier)
    for case in cases:
        response = case.response or ""
        analyzer = ResponseAnalyzer(model, AnalyzerConfig(), verifier)
        analysis = analyzer.analyze(case, response)
        judge = LocalJudge(model, verifier=verifier)
        judged = asyncio.run(judge_sample(case, response, judge))
        key = SampleKey(run_id="x", iteration=1, sample_id=case.id, candidate="")
        fields = analysis.result_fields()
        fields.pop("flags")
        judge_fields = judged.result_fields()
        for name in ("flags", "abstained", "judge_input_tokens", "judge_output_tokens"):
            judge_fields.pop(name, None)
        out[case.id] = {
            "fields": {**fields, **judge_fields},
            "claims": [_row(r.model_dump()) for r in analysis.claim_records(key)],
            "verdicts": [_row(r.model_dump()) for r in judged.verdict_records(key)],
            "highlights": [_row(r.model_dump()) for r in analysis.highlight_records(key)],
        }
    return out


def _row(row: dict[str, Any]) -> str:
    for name in ("run_id", "iteration", "sample_id", "candidate"):
        row.pop(name, None)
    return json.dumps(row, sort_keys=True, default=str)


def test_shared_batched_scoring_gives_the_same_rows_as_scoring_each_sample_alone(
    tmp_path: Path, local_model: LocalEmbedder
) -> None:
    paths, run_id = _run(tmp_path, 12)
    cases = list(load_test_set(tmp_path / "cases.jsonl").cases)
    expected = _expected(cases, local_model)
    results = {r["sample_id"]: r for r in read_table(paths.lake, "results", run_id).to_pylist()}
    children: dict[str, dict[str, list[str]]] = {c.id: {} for c in cases}
    for table in ("claims", "verdicts", "highlights"):
        for row in read_table(paths.lake, table, run_id).to_pylist():
            children[row["sample_id"]].setdefault(table, []).append(row)
    order = {"claims": "claim_id", "verdicts": "claim_index", "highlights": "response_start"}
    for case in cases:
        want = expected[case.id]
        got = results[case.id]
        assert got["error"] is None
        assert {k: got[k] for k in want["fields"]} == want["fields"], case.id
        for table, key in order.items():
            rows = sorted(children[case.id].get(table, []), key=lambda r: (r[key], str(r)))
            want_rows = sorted(want[table], key=lambda r: (json.loads(r)[key], r))
            assert [_row(dict(r)) for r in rows] == want_rows, (case.id, table)
