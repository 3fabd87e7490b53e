"""The way into a run, kept where scripts have always imported it from.

The run itself lives in ``engine.run`` (one job a file); this module re-exports its
public names.
"""

from engine.run import (
    EXIT_CANCELLED,
    EXIT_FAILED_SAMPLES,
    EXIT_OK,
    Components,
    Estimate,
    RunError,
    RunOutcome,
    build_components,
    estimate_run,
    iteration_metrics,
    new_run_id,
    run_evaluation,
)

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
