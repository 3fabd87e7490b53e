"""A run whose samples are all in the home's caches scores in its own process: starting a
worker per core would cost more CPU and memory than the cached scoring it takes over.
Cold runs, runs with new cases and an explicit ``--workers`` start the workers as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.embedders.factory import build_embedder
from engine.lake import read_table
from engine.models import RunConfig
from engine.run import loop
from engine.run.warmth import IN_PROCESS_SAMPLES, looks_warm, scores_in_process
from engine.runner import run_evaluation
from engine.settings import Paths, resolve_paths
from engine.testsets import load_test_set
from tests.engine.test_runner import write_cases

CASES = 130
"""Enough samples for two workers at the default (one per 64 samples, one per core)."""


def _rows(paths: Paths, run_id: str) -> list[tuple[Any, ...]]:
    rows = read_table(paths.lake, "results", run_id).to_pylist()
    return sorted((r["sample_id"], r["accuracy"], r["completeness"]) for r in rows)


@pytest.fixture
def starts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sample counts ``start_pool`` was asked for; the run then scores in process."""
    asked: list[int] = []

    def spy(config: RunConfig, paths: Paths, samples: int, **_: Any) -> None:
        asked.append(samples)

    monkeypatch.setattr(loop, "start_pool", spy)
    return asked


def test_a_run_scored_before_starts_no_workers_and_scores_the_same(
    tmp_path: Path, starts: list[int]
) -> None:
    paths = resolve_paths(tmp_path / "home")
    test_set = load_test_set(write_cases(tmp_path / "cases.jsonl", CASES))
    config = RunConfig(name="t", test_set=str(test_set.path))
    first = run_evaluation(config, paths, test_set=test_set)
    assert starts == [CASES]  # cold: the workers are asked for
    second = run_evaluation(config, paths, test_set=test_set)
    assert starts == [CASES]  # warm: not again
    assert _rows(paths, second.run_id) == _rows(paths, first.run_id)
    more = write_cases(tmp_path / "more.jsonl", CASES)
    more.write_text(more.read_text().replace(" is here.", " is right here."))
    more = load_test_set(more)
    run_evaluation(config.model_copy(update={"test_set": str(more.path)}), paths, test_set=more)
    assert starts == [CASES, CASES]  # new answers: cold again


def test_the_probe_reads_the_cache_and_obeys_the_flags(tmp_path: Path) -> None:
    paths = resolve_paths(tmp_path / "home")
    test_set = load_test_set(write_cases(tmp_path / "cases.jsonl", 40))
    config = RunConfig(name="t", test_set=str(test_set.path), workers=1)
    embedder = build_embedder(config.embedder, paths.cache)
    default = config.model_copy(update={"workers": None})
    assert not looks_warm(test_set.cases, default, embedder)
    run_evaluation(config, paths, test_set=test_set)
    embedder = build_embedder(config.embedder, paths.cache)
    assert looks_warm(test_set.cases, default, embedder)
    assert not looks_warm(test_set.cases, config, embedder)  # --workers given: obeyed
    assert not looks_warm(test_set.cases, default, None)  # no cache to read
    # a third of the set never scored (a run resumed early, a grown set): workers
    grown = load_test_set(write_cases(tmp_path / "grown.jsonl", 60))
    assert not looks_warm(grown.cases, default, embedder)
    # a large warm run keeps its workers: their start is paid back
    assert scores_in_process(test_set.cases, default, embedder, IN_PROCESS_SAMPLES)
    assert not scores_in_process(test_set.cases, default, embedder, IN_PROCESS_SAMPLES + 1)
