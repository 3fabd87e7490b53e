"""Worker processes for the CPU-bound scorers: local scoring on every core.

One process runs Python on one core, and the local path (embedding, then the analyzer's
and the local judge's rules) is CPU-bound. So a run over enough samples starts one worker
process per usable core (``RunConfig.workers``). Each worker builds the run's embedder,
analyzer and local judge once from the run's settings, with the model's threads split
between the workers, and scores whole batches (``engine.scorers.batching``): the event loop
of the run keeps the targets, the HTTP judges and the lake writer.

Consistency: every worker reads and writes the one on-disk embedding cache (sqlite in WAL
mode serialises the writers: one writes at a time), and each sample keeps one worker for
all its scorers, so its vectors are embedded once.

Crash-safety is the run's: results only return with their batch, so a worker that dies
(killed, out of memory) loses nothing that was published and doubles nothing. Its lane gets
a fresh worker and the batch is retried sample by sample (``BatchWorker``); a sample that
kills a worker on its own becomes an error row. Workers ignore Ctrl-C: the run decides what
finishes, and they exit when the run closes the pool or when the run's process dies (their
pipe closes).
"""

from __future__ import annotations

import asyncio
import math
import multiprocessing
import os
import signal
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.models import RunConfig
from engine.scorers.batching import PoolUnavailable
from engine.settings import Paths

SAMPLES_PER_WORKER = 64
"""A run starts one worker per this many samples at most: a worker takes about two
CPU-seconds to start and load the model, which a few dozen samples repay."""
START_TIMEOUT_S = 300.0
"""Longest a worker may take to start and load its model (a loaded machine, a cold disk)."""
MAX_RESTARTS_PER_WORKER = 5
"""Deaths per worker after which the run scores in its own process instead: workers
dying that often point at the machine (memory), not at one sample."""
PARENT_CHECK_S = 0.5
"""How often a worker checks that its run is alive."""
_REMEMBERED_SAMPLES = 4096
"""Samples whose lane is kept until their last scorer asks (a scorer that never asks for
a sample, as the judge for an empty answer, leaves its entry until it is pushed out)."""


@dataclass(frozen=True)
class WorkerRecipe:
    """What a worker process builds its scorers from (sent once, when it starts)."""

    config_json: str
    """The run's ``RunConfig`` as JSON."""
    cache: str | None
    """The on-disk cache folder (embeddings); None: no disk cache."""
    threads: int
    """Threads the worker's model may use per call."""


BatchFunctions = Mapping[str, Callable[[list[Any]], Sequence[Any]]]
"""A worker's batch function per kind of scorer."""

Builder = Callable[[WorkerRecipe], BatchFunctions]
"""Builds a worker's batch functions; a module-level function (it is sent by name)."""


def usable_cores() -> int:
    """Cores this process may run on (its affinity, which a container may narrow)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def worker_bound(samples: int) -> int:
    """Most workers ``samples`` samples can use: one per ``SAMPLES_PER_WORKER`` samples
    (rounded up) and per usable core. More only adds processes that load the model and
    wait: six workers on three samples on two cores took 2.5 GB and 37 s for a 3 s job."""
    return max(1, min(math.ceil(samples / SAMPLES_PER_WORKER), usable_cores()))


def worker_count(config: RunConfig, samples: int) -> int:
    """Worker processes for a run of ``samples`` samples: ``config.workers`` when given
    (bounded by :func:`worker_bound` unless ``config.force_workers``), else one per usable
    core and per ``SAMPLES_PER_WORKER`` samples; 1 scores in-process. Only a local
    embedder makes scoring CPU-bound: a remote one keeps one process."""
    if config.embedder != "local" or config.executor != "local":
        return 1
    if config.workers is not None:
        if config.force_workers:
            return config.workers
        return min(config.workers, worker_bound(samples))
    return max(1, min(usable_cores(), samples // SAMPLES_PER_WORKER))


def worker_note(config: RunConfig, samples: int) -> str | None:
    """The one-line warning when ``--workers`` asked for more than the run can use."""
    count = worker_count(config, samples)
    if config.workers is None or config.force_workers or count >= config.workers:
        return None
    if config.embedder != "local" or config.executor != "local":
        return None  # nothing is scored in workers: the flag is moot, not lowered
    return (
        f"--workers {config.workers}: {samples} sample(s) on {usable_cores()} usable core(s) "
        f"use at most {count}; starting {count} (--force-workers keeps {config.workers})"
    )


def local_scorers(recipe: WorkerRecipe) -> BatchFunctions:
    """The real worker: the run's analyzer and local judge over a shared embedding store,
    the same batch functions a run without workers calls in a thread."""
    from engine.embedders.factory import build_embedder
    from engine.embedders.store import EmbeddingStore
    from engine.judges.factory import build_judge
    from engine.judges.local.judge import LocalJudge
    from engine.scorers.analyzer import AnalyzerScorer
    from engine.scorers.judge import JudgeScorer, pooled_judge
    from engine.scoring.analyzer import ResponseAnalyzer
    from engine.scoring.judging import judge_sample
    from engine.verifier.choice import LOCAL_VERIFIERS, build_verifier

    config = RunConfig.model_validate_json(recipe.config_json)
    cache = Path(recipe.cache) if recipe.cache is not None else None
    built = build_embedder(config.embedder, cache, threads=recipe.threads)
    load = getattr(getattr(built, "inner", built), "load", None)
    if load is not None:
        load()  # now, while the run sets up, not in the first batch
    embedder = EmbeddingStore(built)
    # the workers only ever get a verifier that computes here (``pooled_judge``)
    verifier = (
        build_verifier(config.verifier, cache_dir=cache)
        if config.verifier in LOCAL_VERIFIERS
        else None
    )
    functions: dict[str, Callable[[list[Any]], Sequence[Any]]] = {
        "analyzer": AnalyzerScorer(
            ResponseAnalyzer(embedder, config.analyzer, verifier)
        ).score_batch
    }
    if pooled_judge(config):
        judge = (
            build_judge("local", embedder=embedder, cache_dir=cache, verifier=verifier)
            if config.judge == "local"
            # the cascade's first judge, as the judge scorer builds it
            else LocalJudge(embedder, verifier=verifier)
        )

        async def judged(case: Any, response: str, j: Any, weights: Any) -> Any:
            return await judge_sample(case, response, j, weights=weights)

        functions["judge"] = JudgeScorer(judge, judged, config.rag_weights).judge_batch
    return functions


_builder: Builder | None = None
_recipe: WorkerRecipe | None = None
_functions: BatchFunctions | None = None


def _start_worker(builder: Builder, recipe: WorkerRecipe) -> None:
    global _builder, _recipe
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _builder, _recipe = builder, recipe
    threading.Thread(target=_exit_with_parent, args=(os.getppid(),), daemon=True).start()


def _exit_with_parent(parent: int) -> None:
    """A worker outlives a run killed with -9 otherwise: it holds both ends of its own
    task pipe, so it never reads an end of input. An orphan is re-parented."""
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_S)
    os._exit(0)


def _worker_functions() -> BatchFunctions:
    global _functions
    if _functions is None:
        assert _builder is not None and _recipe is not None, "not a scoring worker"
        _functions = _builder(_recipe)
    return _functions


def _score(kind: str, items: list[Any]) -> list[Any]:
    """In a worker: one batch of ``kind``, outcomes in order."""
    from engine.judges.local.offload import worker_scope

    with worker_scope():
        return list(_worker_functions()[kind](items))


def _warm() -> int:
    """In a worker: build the scorers (and load the model) before the first batch."""
    _worker_functions()
    return os.getpid()


class ScoringPool:
    """One worker process per lane, each scoring one batch at a time (``BatchPool``)."""

    def __init__(self, recipe: WorkerRecipe, workers: int, *, users: int, builder: Builder) -> None:
        """Start ``workers`` processes (they load their model in the background); a sample
        keeps its lane for ``users`` requests (the scorers that use the pool)."""
        self._recipe = recipe
        self._builder = builder
        self._users = max(1, users)
        self._next = 0
        self._lanes: OrderedDict[int, list[int]] = OrderedDict()
        self._executors = [self._start() for _ in range(max(1, workers))]
        self.restarts = 0
        """Workers started again after one died."""

    @property
    def workers(self) -> int:
        """Worker processes (lanes)."""
        return len(self._executors)

    def lane(self, sample: Hashable) -> int:
        """The lane of ``sample``: new samples go round the lanes in turn, and a sample
        keeps its lane until each of the pool's users has asked."""
        key = hash(sample)
        kept = self._lanes.get(key)
        if kept is not None:
            kept[1] -= 1
            if kept[1] <= 0:
                del self._lanes[key]
            return kept[0]
        lane = self._next
        self._next = (self._next + 1) % self.workers
        if self._users > 1:
            self._lanes[key] = [lane, self._users - 1]
            while len(self._lanes) > _REMEMBERED_SAMPLES:
                self._lanes.popitem(last=False)
        return lane

    async def run(self, kind: str, lane: int, items: list[Any]) -> list[Any]:
        """``kind``'s batch over ``items`` in ``lane``'s worker. A worker that died raises
        ``BrokenProcessPool`` once, and its lane already has a fresh worker."""
        if self.restarts > MAX_RESTARTS_PER_WORKER * self.workers:
            raise PoolUnavailable(f"scoring workers died {self.restarts} times")
        executor = self._executors[lane]
        try:
            return await asyncio.get_running_loop().run_in_executor(executor, _score, kind, items)
        except BrokenProcessPool:
            if self._executors[lane] is executor:
                executor.shutdown(wait=False, cancel_futures=True)
                self._executors[lane] = self._start()
                self.restarts += 1
            raise

    def warm(self, timeout: float = START_TIMEOUT_S) -> None:
        """Have every worker build its scorers and load its model, and wait for them (the
        run cannot score before). Raises ``PoolUnavailable`` naming why one could not."""
        started: list[Future[int]] = [executor.submit(_warm) for executor in self._executors]
        try:
            for future in started:
                future.result(timeout=timeout)
        except Exception as exc:
            self.close(wait=False)
            reason = str(exc) or type(exc).__name__
            raise PoolUnavailable(f"scoring workers did not start: {reason}") from exc

    def close(self, *, wait: bool = True) -> None:
        """Stop the workers (waiting for batches in flight unless ``wait`` is False)."""
        for executor in self._executors:
            executor.shutdown(wait=wait, cancel_futures=True)

    async def aclose(self) -> None:
        """``close`` off the event loop."""
        await asyncio.to_thread(self.close)

    def _start(self) -> ProcessPoolExecutor:
        # spawn, not fork: the run's process has threads (onnxruntime, asyncio's), and a
        # forked child inherits their locks in whatever state they were.
        return ProcessPoolExecutor(
            max_workers=1,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_worker,
            initargs=(self._builder, self._recipe),
        )


def start_pool(
    config: RunConfig,
    paths: Paths,
    samples: int,
    *,
    builder: Builder = local_scorers,
    warn: Callable[[str], None] | None = None,
) -> ScoringPool | None:
    """The run's worker pool, started and warm; None when the run scores in this process.
    ``warn`` gets the line saying ``--workers`` was lowered. Raises ``PoolUnavailable``
    when the workers could not start (the run then scores in this process)."""
    from engine.scorers.judge import pooled_judge

    note = worker_note(config, samples)
    if note is not None and warn is not None:
        warn(note)
    workers = worker_count(config, samples)
    if workers <= 1:
        return None
    recipe = WorkerRecipe(
        config_json=config.model_dump_json(),
        cache=str(paths.cache),
        threads=max(1, usable_cores() // workers),
    )
    pool = ScoringPool(recipe, workers, users=1 + int(pooled_judge(config)), builder=builder)
    pool.warm()
    return pool
