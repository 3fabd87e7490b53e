"""What the Experiments page reads while a run goes and what it tries before one: the live
results grid from the run's Parquet parts, and a grader tried on one sample.

The grid reads the lake, not the warehouse: a run publishes a part per flushed batch of
samples and ingests when it can, so the lake is the freshest truth and reading it needs no
lock. A grader is tried by the real path (``evalhouse run`` of one sample) in a throwaway
home, so nothing reaches the person's lake or warehouse. No Streamlit here.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from dashboard.launcher import run_arguments, write_config
from engine.lake import LakeError, read_table
from engine.models import RunConfig
from engine.processes import run_captured
from engine.secrets import mask_text
from engine.settings import Paths, resolve_paths

TRY_BUDGET_S = 90.0
"""Total time a grader's try may take, the run's start included."""
GRID_KEY = ("sample_id", "iteration")
"""The grid's row key: one row per sample and iteration."""
CELL_SEPARATOR = " × "
"""Between candidate and grader in a grid column's name."""


def cell_name(candidate: str, grader: str) -> str:
    """A grid column: the candidate and grader whose scores it holds."""
    return f"{candidate}{CELL_SEPARATOR}{grader}" if candidate else grader


def planned_cells(config: RunConfig) -> list[str]:
    """The grid's columns in the order the experiment chose its candidates and graders."""
    return [
        cell_name(candidate, grader)
        for candidate in config.candidates or ("",)
        for grader in config.graders or ()
    ]


def short_labels(candidates: Sequence[str], cells: Sequence[str]) -> tuple[dict[str, str], str]:
    """Grid headers that fit a narrow page: each candidate as a letter (``A · exact``), and
    the legend that names the letters; with one candidate or none, the grader alone."""
    letters = {c: chr(ord("A") + i) for i, c in enumerate(candidates) if i < 26}
    labels: dict[str, str] = {}
    for cell in cells:
        candidate, _, grader = cell.rpartition(CELL_SEPARATOR)
        if not candidate:
            labels[cell] = cell
        elif len(letters) > 1 and candidate in letters:
            labels[cell] = f"{letters[candidate]} · {grader}"
        else:
            labels[cell] = grader if len(letters) <= 1 else cell
    legend = " · ".join(f"{letter} = {c}" for c, letter in letters.items())
    return labels, legend if len(letters) > 1 else ""


def live_grid(paths: Paths, run_id: str, order: Sequence[str] = ()) -> pl.DataFrame:
    """The run's grader scores so far: a row per sample (and iteration), a column per
    candidate × grader (those of ``order`` first, in its order); a cell is null while not
    scored or when its grader failed. Empty before the first part is published."""
    try:
        table = read_table(
            paths.lake,
            "grader_scores",
            run_id,
            columns=["iteration", "sample_id", "candidate", "grader", "score"],
        )
    except LakeError:
        return pl.DataFrame()
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    if frame.is_empty():
        return pl.DataFrame()
    frame = frame.with_columns(
        pl.struct("candidate", "grader")
        .map_elements(lambda c: cell_name(c["candidate"], c["grader"]), return_dtype=pl.String)
        .alias("cell")
    )
    seen = set(frame["cell"].to_list())
    cells = [c for c in order if c in seen] + sorted(seen - set(order))
    # A resumed or re-flushed sample may have two rows for one cell: the last one counts.
    grid = frame.pivot(on="cell", index=list(GRID_KEY), values="score", aggregate_function="last")
    return grid.select([*GRID_KEY, *cells]).sort(list(GRID_KEY))


def samples_scored(grid: pl.DataFrame) -> int:
    """How many rows of the grid hold at least one score."""
    cells = [c for c in grid.columns if c not in GRID_KEY]
    if grid.is_empty() or not cells:
        return 0
    return int(grid.select(pl.any_horizontal(pl.col(cells).is_not_null())).to_series().sum())


def answers_graded(grid: pl.DataFrame, graders: int) -> int:
    """Answers (sample × candidate × iteration) whose every grader has a row so far: the
    lake's count, fresher than the last progress line the run printed."""
    cells = [c for c in grid.columns if c not in GRID_KEY]
    if grid.is_empty() or not cells or graders < 1:
        return 0
    filled = grid.select(pl.sum_horizontal(pl.col(cells).is_not_null())).to_series().sum()
    return int(filled) // graders


@dataclass(frozen=True)
class GraderTry:
    """A grader tried on one sample."""

    ok: bool
    """Whether the try ran (a grader that failed on the sample still ran: its reason says)."""
    score: float | None
    """The grader's score, 0-1; None when it failed or did not run."""
    passed: bool | None
    """Whether the output met the grader's bar."""
    reason: str
    """The grader's reasoning, or why the try did not run (secrets masked)."""
    output: str = ""
    """The output it graded."""


def try_grader(
    config: RunConfig, grader: str, sample_id: str, *, budget_s: float = TRY_BUDGET_S
) -> GraderTry:
    """Grade one sample with one grader: the config's first candidate (or its own target)
    answers and ``grader`` grades, in a run of that sample in a throwaway home."""
    trial = config.model_copy(
        update={
            "name": f"try {grader}",
            "graders": (grader,),
            "candidates": config.candidates[:1] if config.candidates else None,
            "iterations": 1,
            "judge_repeats": 1,
            "until_ci": None,
            "series": None,
        }
    )
    with tempfile.TemporaryDirectory(prefix="evalhouse-try-") as scratch:
        paths = resolve_paths(Path(scratch) / "home")
        config_file = write_config(trial, Path(scratch) / "try.json")
        command = [*run_arguments(paths, config_file, (sample_id,)), "--no-ingest"]
        code, out, err = run_captured(command, budget_s)
        if code is None:
            return GraderTry(False, None, None, f"no result within {budget_s:.0f} s")
        run_id = out.strip().splitlines()[-1] if out.strip() else ""
        scores = _table(paths, "grader_scores", run_id)
        if scores.is_empty():
            lines = [ln for ln in err.strip().splitlines() if ln.strip()]
            why = lines[-1] if lines else f"the try exited with code {code}"
            return GraderTry(False, None, None, mask_text(why))
        results = _table(paths, "results", run_id)
    row = scores.row(0, named=True)
    output = str(results["response"][0]) if "response" in results.columns and len(results) else ""
    return GraderTry(True, row["score"], row["passed"], mask_text(str(row["reason"])), output)


def _table(paths: Paths, table: str, run_id: str) -> pl.DataFrame:
    if not run_id:
        return pl.DataFrame()
    try:
        frame = pl.from_arrow(read_table(paths.lake, table, run_id))
    except (LakeError, ValueError):
        return pl.DataFrame()
    assert isinstance(frame, pl.DataFrame)
    return frame
