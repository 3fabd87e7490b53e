"""Judge drift: how far scores move when only the judge changes.

A trend that moves when the judge model or its prompt changed mixes two things: the system
answering differently, and the judge grading the same answers differently. To tell them
apart each series keeps a frozen set of *anchors* (earlier cases with the answers a run
stored, drawn evenly across domains, chosen once and recorded in the lake table
``drift_anchors``). When the judge changes, both judges score the anchors' stored answers;
the mean paired difference per metric, with its 95% interval, is the judge's drift. What is
left of an observed change once the drift is taken out is the system's.

Re-judging is an ordinary recorded run (the same scorers and settings as the run it stands
for) in a scratch home beside the real one, so the series never sees it; the caches are
shared, so an unchanged judge answers from its cache.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np

from engine.errors import InputError
from engine.lake import list_parts, read_table, write_part
from engine.models import DriftAnchorRecord, JudgeDriftRecord, RunConfig
from engine.models.metrics import JUDGE_METRICS, METRICS
from engine.noise import bootstrap_check
from engine.reanalysis import stored_answers, stored_cases
from engine.run import new_run_id, run_evaluation
from engine.run.identity import latest_run_states, stored_config
from engine.settings import Paths
from engine.testsets import load_test_set

ANCHOR_LIMIT = 50
"""Anchors per series: enough for a paired interval a few points wide, few enough that
re-judging them costs little next to a run."""

DRIFT_METRICS: tuple[str, ...] = JUDGE_METRICS
"""The metrics a judge decides (Trends names; their ``results`` column and scale are in
``engine.models.metrics``). Analyzer metrics are left out: the embedder scores them, not
the judge."""


class DriftError(InputError):
    """A drift check cannot be made (no anchors, an unknown run): one line, exit 2."""


@dataclass(frozen=True)
class AnchorSet:
    """The frozen anchors of a series."""

    series: str
    run_id: str
    """The run whose stored answers the anchors are."""
    sample_ids: tuple[str, ...]


def choose_anchors(domains: Mapping[str, str], series: str, limit: int = ANCHOR_LIMIT) -> list[str]:
    """Up to ``limit`` sample ids of ``domains`` (sample id -> domain), taken in turn from
    each domain so a large domain cannot crowd out a small one; within a domain the order
    is a hash of (series, id), so the choice is the same on every machine."""
    by_domain: dict[str, list[str]] = {}
    for sample_id, domain in domains.items():
        by_domain.setdefault(domain, []).append(sample_id)
    queues = [
        sorted(ids, key=lambda s: hashlib.sha256(f"{series}\0{s}".encode()).hexdigest())
        for _domain, ids in sorted(by_domain.items())
    ]
    chosen: list[str] = []
    while len(chosen) < limit and any(queues):
        for queue in queues:
            if queue and len(chosen) < limit:
                chosen.append(queue.pop(0))
    return chosen


def frozen_anchors(lake: Path, series: str) -> AnchorSet | None:
    """The series' anchor set as first recorded (None before its first drift check)."""
    rows: list[dict[str, object]] = []
    for run_id in sorted({p.run_id for p in list_parts(lake, ["drift_anchors"])}):
        rows.extend(r for r in read_table(lake, "drift_anchors", run_id, 0).to_pylist())
    mine = [r for r in rows if r["series"] == series]
    if not mine:
        return None
    first = min(mine, key=lambda r: (str(r["frozen_at"]), str(r["run_id"])))
    ids = sorted(str(r["sample_id"]) for r in mine if r["run_id"] == first["run_id"])
    return AnchorSet(series, str(first["run_id"]), tuple(ids))


def anchor_set(paths: Paths, series: str, source_run_id: str, now: datetime) -> AnchorSet:
    """The series' frozen anchors; the first time, chosen from ``source_run_id``'s answered
    cases and recorded, so they never change afterwards."""
    found = frozen_anchors(paths.lake, series)
    if found is not None:
        return found
    results = read_table(
        paths.lake,
        "results",
        source_run_id,
        1,
        columns=("sample_id", "domain", "candidate", "error"),
    ).to_pylist()
    answered = {
        str(r["sample_id"]): str(r["domain"])
        for r in results
        if not r["candidate"] and not r["error"]
    }
    kept = stored_cases(paths, source_run_id)
    ids = choose_anchors({s: d for s, d in answered.items() if s in kept}, series)
    if not ids:
        raise DriftError(f"run {source_run_id!r} has no answered cases to anchor series {series!r}")
    records = [
        DriftAnchorRecord(
            run_id=source_run_id, series=series, sample_id=s, domain=answered[s], frozen_at=now
        )
        for s in ids
    ]
    write_part(paths.lake, "drift_anchors", source_run_id, 0, records)
    return AnchorSet(series, source_run_id, tuple(sorted(ids)))


def judge_identity(lake: Path, run_id: str) -> str:
    """The judge that scored a run with its prompt version (``openai:gpt-4o-mini@v1``)."""
    rows = read_table(
        lake, "runs", run_id, 0, columns=("judge", "judge_prompt_version", "updated_at")
    ).to_pylist()
    if not rows:
        raise DriftError(f"run {run_id!r} is not in the lake")
    latest = max(rows, key=lambda r: r["updated_at"])
    return f"{latest['judge']}@{latest['judge_prompt_version'] or '-'}"


def run_config(paths: Paths, run_id: str) -> RunConfig:
    """A run's stored config (the settings its judge scored with)."""
    state = latest_run_states(paths.lake).get(run_id)
    config = None if state is None else stored_config(state)
    if config is None:
        raise DriftError(f"run {run_id!r}: not in the lake, or its config cannot be read")
    return config


def _column(metric: str) -> str:
    column = METRICS[metric].column
    assert column is not None, f"{metric} has no results column"
    return column


def stored_scores(
    lake: Path, run_id: str, sample_ids: Sequence[str]
) -> dict[str, dict[str, float]]:
    """sample id -> metric -> 0-100 value, as the run's first iteration stored them."""
    wanted = set(sample_ids)
    columns = ("sample_id", "candidate", "error", *(_column(m) for m in DRIFT_METRICS))
    out: dict[str, dict[str, float]] = {}
    for row in read_table(lake, "results", run_id, 1, columns=columns).to_pylist():
        if row["candidate"] or row["error"] or row["sample_id"] not in wanted:
            continue
        out[str(row["sample_id"])] = {
            metric: METRICS[metric].scale.to_100(row[_column(metric)])
            for metric in DRIFT_METRICS
            if row[_column(metric)] is not None
        }
    return out


@dataclass(frozen=True)
class _ScratchPaths(Paths):
    """A throw-away home that shares the real home's caches (embeddings, judge answers)."""

    shared_cache: Path = Path()

    @property
    def cache(self) -> Path:
        """The real home's caches."""
        return self.shared_cache


def rejudge(
    paths: Paths, anchors: AnchorSet, config: RunConfig
) -> tuple[str, dict[str, dict[str, float]]]:
    """Score the anchors' stored answers with ``config``'s judge and scoring settings in a
    scratch home: (the judge's identity, sample id -> metric -> 0-100 value)."""
    cases = stored_cases(paths, anchors.run_id)
    answers = stored_answers(paths, anchors.run_id)
    rows = [
        json.dumps(cases[s].model_copy(update={"response": answers[s]}).model_dump(mode="json"))
        for s in anchors.sample_ids
        if s in cases and s in answers
    ]
    paths.home.mkdir(parents=True, exist_ok=True)
    scratch_dir = Path(tempfile.mkdtemp(prefix=".drift-", dir=paths.home))
    try:
        test_set = scratch_dir / "anchors.jsonl"
        test_set.write_text("\n".join(rows) + "\n", encoding="utf-8")
        scratch = _ScratchPaths(scratch_dir / "home", shared_cache=paths.cache)
        settings = config.model_dump()
        settings.update(
            name="drift anchors", series=None, test_set=str(test_set), target="recorded",
            candidates=None, iterations=1, until_ci=None, reanalysis_of=None, executor="local",
            ground_truth_file=None, ground_truth_hash=None, cascade=False,
        )  # fmt: skip
        outcome = run_evaluation(
            RunConfig.model_validate(settings), scratch, test_set=load_test_set(test_set)
        )
        identity = judge_identity(scratch.lake, outcome.run_id)
        return identity, stored_scores(scratch.lake, outcome.run_id, anchors.sample_ids)
    finally:
        shutil.rmtree(scratch_dir, ignore_errors=True)


@dataclass(frozen=True)
class Shift:
    """One metric's drift: new - old on the same anchors (0-100 points)."""

    metric: str
    mean_shift: float
    ci_low: float | None
    ci_high: float | None
    n: int


def shifts(
    old: Mapping[str, Mapping[str, float]], new: Mapping[str, Mapping[str, float]]
) -> list[Shift]:
    """Per metric, the paired differences over the anchors both judges scored on it."""
    out = []
    for metric in DRIFT_METRICS:
        pairs = [
            new[s][metric] - old[s][metric]
            for s in sorted(old.keys() & new.keys())
            if metric in old[s] and metric in new[s]
        ]
        if pairs:
            # The one interval of a change (engine.noise): each anchor is one paired sample.
            check = bootstrap_check(np.asarray(pairs, dtype=np.float64))
            out.append(
                Shift(metric, math.fsum(pairs) / len(pairs), check.low, check.high, len(pairs))
            )
    return out


@dataclass(frozen=True)
class JudgeSide:
    """One of the two judges of a check: a run's (its stored config), or a spec applied to
    another run's config (``evalhouse drift --judge``)."""

    config: RunConfig
    run_id: str | None = None
    """The run this judge scored, when it did."""


@dataclass(frozen=True)
class DriftCheck:
    """The outcome of one check, as recorded."""

    check_id: str
    anchors: AnchorSet
    old_judge: str
    new_judge: str
    shifts: tuple[Shift, ...]
    records: tuple[JudgeDriftRecord, ...]


def _scores(
    paths: Paths, anchors: AnchorSet, side: JudgeSide
) -> tuple[str, dict[str, dict[str, float]]]:
    """A side's scores of the anchors: the stored ones when its judge is the one that scored
    the anchors' run, else a re-judging."""
    source = judge_identity(paths.lake, anchors.run_id)
    if side.run_id is not None and judge_identity(paths.lake, side.run_id) == source:
        return source, stored_scores(paths.lake, anchors.run_id, anchors.sample_ids)
    return rejudge(paths, anchors, side.config)


def check_drift(
    paths: Paths,
    anchors: AnchorSet,
    old: JudgeSide,
    new: JudgeSide,
    *,
    now: datetime,
    run_id: str | None = None,
) -> DriftCheck:
    """Score the anchors with both judges, and record the drift per metric (lake table
    ``judge_drift``, under a new check id) for ``run_id`` against ``old``'s run."""
    old_judge, old_scores = _scores(paths, anchors, old)
    new_judge, new_scores = _scores(paths, anchors, new)
    found = tuple(shifts(old_scores, new_scores))
    check_id = f"drift-{new_run_id()}"
    records = tuple(
        JudgeDriftRecord(
            check_id=check_id,
            run_id=run_id,
            baseline_run_id=old.run_id,
            series=anchors.series,
            anchor_run_id=anchors.run_id,
            metric=s.metric,
            old_judge=old_judge,
            new_judge=new_judge,
            mean_shift=s.mean_shift,
            ci_low=s.ci_low,
            ci_high=s.ci_high,
            n=s.n,
            checked_at=now,
        )
        for s in found
    )
    write_part(paths.lake, "judge_drift", check_id, 0, records)
    return DriftCheck(check_id, anchors, old_judge, new_judge, found, records)


def split_delta(
    observed: float, shift: float, low: float | None, high: float | None
) -> tuple[float, float | None, float | None]:
    """An observed change between two runs split into the system's part: (observed - drift,
    and the ends of its interval, which carry the drift's interval)."""
    if low is None or high is None:
        return observed - shift, None, None
    return observed - shift, observed - high, observed - low


def render(check: DriftCheck) -> str:
    """The check as a small text table for the terminal."""
    lines = [
        f"judge drift on {len(check.anchors.sample_ids)} anchors of series "
        f"{check.anchors.series!r} (answers of run {check.anchors.run_id})",
        f"old judge: {check.old_judge}   new judge: {check.new_judge}",
        f"{'metric':<22}{'shift':>9}  {'95% interval':<20}{'n':>4}",
    ]
    for s in check.shifts:
        interval = (
            "-" if s.ci_low is None or s.ci_high is None else f"[{s.ci_low:+.1f}, {s.ci_high:+.1f}]"
        )
        lines.append(f"{s.metric:<22}{s.mean_shift:>+9.1f}  {interval:<20}{s.n:>4}")
    if not check.shifts:
        lines.append("(no metric both judges scored)")
    return "\n".join(lines)
