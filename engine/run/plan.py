"""The run's plan lives in ``engine.candidates.plan`` (below the scorers, which read it);
this name stays for the command line, which checks a run's files before it starts."""

from engine.candidates.plan import check_run_files

__all__ = ["check_run_files"]
