"""A run: lanes x cases x iterations, every sample through one pipeline of scorers.

One job a file:

* ``plan``: the candidates and graders of a run (``engine.candidates.plan``, below the
  scorers that read it), checked before any call;
* ``lanes``: where responses come from (the run's target, or one per candidate);
* ``components``: the parts a run composes (target, embedder, analyzer, judge);
* ``identity``: new run or resume, and the lock that tells a live run from a dead one;
* ``pipeline``: one sample through stages of scorers, one error path;
* ``writer``: the commit protocol of the lake parts, resume's done set, progress files;
* ``metrics``: the aggregates of an iteration;
* ``loop``: iterations, flushes, signals and run states;
* ``executors``: who scores an iteration (local workers; Ray in ``distributed``);
* ``estimate``: calls, tokens, cost and time, summed from what each scorer and lane says.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from engine.candidates.plan import with_project
from engine.clock import utcnow
from engine.models import RunConfig
from engine.progress import ProgressSink
from engine.run.components import Components, build_components
from engine.run.estimate import Estimate, estimate_run
from engine.run.identity import RunError, new_run_id, resolve_run
from engine.run.loop import (
    EXIT_CANCELLED,
    EXIT_FAILED_SAMPLES,
    EXIT_OK,
    Runner,
    RunOutcome,
)
from engine.run.metrics import iteration_metrics
from engine.secrets import register_url
from engine.settings import Paths
from engine.testsets import LoadedTestSet


def run_evaluation(
    config: RunConfig,
    paths: Paths,
    *,
    test_set: LoadedTestSet,
    resume_run_id: str | None = None,
    after_flush: Callable[[], None] | None = None,
    progress: ProgressSink | None = None,
    only_sample_ids: set[str] | None = None,
    components: Components | None = None,
    clock: Callable[[], datetime] | None = None,
    start_new_if_live: bool = False,
) -> RunOutcome:
    """Run (or resume) an evaluation and return how it ended.

    Resumes ``resume_run_id``, or else the latest unfinished run with the same name, test-set
    hash and computing settings whose process is gone. A matching run alive in another
    process is never taken over: RunError, or with ``start_new_if_live`` a new run.
    ``after_flush`` (the CLI's ingest) is called after every iteration and at the end; its
    exceptions are reported through ``progress`` and never stop the run. Raises
    ``RunError`` for problems the user must fix (exit code 2). ``components`` replaces the
    parts built from the config (tests, benchmarks); ``clock`` (naive UTC ``datetime``)
    dates the records, so the demo can backdate its weekly runs.

    A run with candidates or graders stores its project folder absolute, with a digest of
    its files, so a resume grades with the same files or refuses.
    """
    cases = test_set.cases
    if only_sample_ids is not None:
        unknown = sorted(only_sample_ids - {c.id for c in cases})
        if unknown:
            raise RunError(f"sample ids not in the test set: {', '.join(unknown[:10])}")
        cases = tuple(c for c in cases if c.id in only_sample_ids)
    config = with_project(config)
    # A password in the target's URL is masked in runs.config and every error text.
    register_url(config.target.removeprefix("http:") if "://" in config.target else "")
    now = clock or utcnow
    identity = resolve_run(
        paths,
        config,
        test_set.sha256,
        resume_run_id=resume_run_id,
        now=now(),
        start_new_if_live=start_new_if_live,
    )
    runner = Runner(
        identity.config, paths, test_set, cases, progress=progress, after_flush=after_flush,
        clock=now,
    )  # fmt: skip
    return runner.run(identity, components)


__all__ = [
    "EXIT_CANCELLED",
    "EXIT_FAILED_SAMPLES",
    "EXIT_OK",
    "Components",
    "Estimate",
    "RunError",
    "RunOutcome",
    "build_components",
    "estimate_run",
    "iteration_metrics",
    "new_run_id",
    "run_evaluation",
]
