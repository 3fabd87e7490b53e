"""Whether a run's samples are already in the home's caches, before worker processes start.

A run scored before (CI re-running an unchanged test set, a run resumed near its end, the
same recorded answers launched again) reads every vector from the cache: for a few hundred
samples, starting a worker process per core then costs more than the scoring it takes
over (each worker imports the scorers and loads the models). A warm run of 300 demo samples
at the default workers took 17.9 CPU-ms a sample and 820 MB at its peak with the workers,
11.5 CPU-ms and 231 MB without them, at the same samples/s (docs/performance.md, the warm
path).
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.embedders.base import Embedder
from engine.embedders.cache import CachedEmbedder
from engine.models import RunConfig, TestCase
from engine.scoring.plan import AnalysisError, plan_sample

PROBED_CASES = 32
"""Cases, spread evenly over the test set, whose embedding texts are looked up."""

IN_PROCESS_SAMPLES = 500
"""Most samples a warm run scores in its own process. On 2 cores, 300 warm demo samples ran
as fast in one process as with two workers (93 vs 97 samples/s) for 0.64x the CPU and 0.28x
the memory; at 1,000 the workers' start is paid back (150 vs 110 samples/s with
``--workers 2``), so a larger warm run keeps them."""


def scores_in_process(
    cases: Sequence[TestCase], config: RunConfig, embedder: Embedder | None, samples: int
) -> bool:
    """Whether a run of ``samples`` samples skips its worker pool: a warm run
    (``looks_warm``) of at most ``IN_PROCESS_SAMPLES`` samples."""
    return samples <= IN_PROCESS_SAMPLES and looks_warm(cases, config, embedder)


def looks_warm(cases: Sequence[TestCase], config: RunConfig, embedder: Embedder | None) -> bool:
    """True when every text the analyzer embeds for ``PROBED_CASES`` cases spread over the
    run is in ``embedder``'s disk cache: the run scores in its own process instead of
    starting workers. Only for recorded answers at the default ``--workers`` (answers a
    target fetches are new; an explicit ``--workers`` is obeyed). A case of the run not
    scored yet (a resume) has texts the cache lacks, so a run with much left starts its
    workers as before."""
    if config.workers is not None or config.target != "recorded" or config.candidates:
        return False
    cache = embedder
    while cache is not None and not isinstance(cache, CachedEmbedder):
        cache = getattr(cache, "inner", None)  # the run's in-memory store wraps the cache
    if cache is None or not cases:
        return False
    count = len(cases)
    probed = (
        cases
        if count <= PROBED_CASES
        else [cases[i * count // PROBED_CASES] for i in range(PROBED_CASES)]
    )
    texts: set[str] = set()
    for case in probed:
        if case.response is None:
            return False
        try:
            texts |= plan_sample(case, case.response, config.analyzer).texts()
        except AnalysisError:
            continue  # scored as an error row, with nothing to embed
    return bool(texts) and cache.cached(texts) == len(texts)
