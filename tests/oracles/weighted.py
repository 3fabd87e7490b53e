"""Per-candidate scores over grader results: equal-weight average and weighted score.

The eval-harness write-up ("Weighted Scoring") computes two scores per candidate:

* **equal-weight average**: all graders count equally, i.e. the mean of the per-grader
  mean scores;
* **weighted average**, its ``computeWeightedScore``::

      for (graderId, weight) of weights:
          avgScore = mean of that grader's scores
          weightedSum += avgScore * weight;  totalWeight += weight
      return weightedSum / totalWeight

  so ``sum(w_g * mean_g) / sum(w_g)``. Where the write-up would divide by zero for a
  grader with no scored result (every call failed), we leave that grader out of both
  sums: the score is over the graders present. A total weight of 0 gives no score.

Scores that are null (the grader failed on that output) are left out of the means; for
pass rates they count as not passed. The SQL views ``candidate_scores`` and
``grader_summary`` compute the same numbers; a test checks they agree.

Rows are ``GraderScoreRecord`` objects or mappings with the same keys.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from engine.models import GraderScoreRecord

Row = GraderScoreRecord | Mapping[str, Any]


@dataclass(frozen=True)
class GraderStat:
    """One grader's results for one candidate."""

    grader: str
    """Grader id."""
    mean_score: float | None
    """Mean of the non-null scores; None when every result failed."""
    pass_rate: float
    """Passed results / all results (failed results count as not passed)."""
    count: int
    """Results, failed ones included."""
    errors: int
    """Results with a null score."""
    weight: float
    """The grader's weight for this candidate."""


@dataclass(frozen=True)
class CandidateScore:
    """The scores of one candidate."""

    candidate: str
    """Candidate id."""
    samples: int
    """Distinct (iteration, sample) pairs graded."""
    equal_weight: float | None
    """Mean of the per-grader means."""
    weighted: float | None
    """sum(w * mean) / sum(w) over graders with a mean."""
    pass_rate: float
    """Share of (iteration, sample) pairs that passed every grader."""
    graders: tuple[GraderStat, ...]
    """Per-grader statistics, sorted by grader id."""


def _get(row: Row, name: str) -> Any:
    if isinstance(row, Mapping):
        return row.get(name)
    return getattr(row, name)


def equal_weight_score(means: Mapping[str, float | None]) -> float | None:
    """The write-up's equal-weight average: mean of the grader means present."""
    present = [m for m in means.values() if m is not None]
    return sum(present) / len(present) if present else None


def weighted_score(means: Mapping[str, float | None], weights: Mapping[str, float]) -> float | None:
    """The write-up's weighted score: sum(w * mean) / sum(w) over graders with a mean.

    A grader missing from ``weights`` weighs 0, as in the write-up, whose loop runs over
    the declared weights only.
    """
    total = 0.0
    weighted = 0.0
    for grader, mean in means.items():
        weight = weights.get(grader, 0.0)
        if mean is None or weight <= 0:
            continue
        weighted += weight * mean
        total += weight
    return weighted / total if total > 0 else None


def grader_stats(rows: Iterable[Row]) -> dict[str, GraderStat]:
    """Per-grader statistics of ``rows`` (one candidate's rows), by grader id.

    A grader's weight is the largest weight on its rows: the runner writes the same
    weight on every row of a (candidate, grader), and the SQL view uses max() too.
    """
    scores: dict[str, list[float]] = {}
    passed: dict[str, int] = {}
    count: dict[str, int] = {}
    weight: dict[str, float] = {}
    for row in rows:
        grader = str(_get(row, "grader"))
        count[grader] = count.get(grader, 0) + 1
        scores.setdefault(grader, [])
        score = _get(row, "score")
        if score is not None:
            scores[grader].append(float(score))
        if _get(row, "passed") is True:
            passed[grader] = passed.get(grader, 0) + 1
        w = _get(row, "weight")
        w = 1.0 if w is None else float(w)
        weight[grader] = max(weight.get(grader, w), w)
    return {
        g: GraderStat(
            grader=g,
            mean_score=sum(scores[g]) / len(scores[g]) if scores[g] else None,
            pass_rate=passed.get(g, 0) / count[g],
            count=count[g],
            errors=count[g] - len(scores[g]),
            weight=weight[g],
        )
        for g in sorted(count)
    }


def candidate_scores(
    rows: Iterable[Row], weights: Mapping[str, Mapping[str, float]] | None = None
) -> list[CandidateScore]:
    """Scores of every candidate in ``rows``, sorted by candidate id.

    ``weights`` (candidate -> grader -> weight) overrides the weights written on the rows.
    """
    by_candidate: dict[str, list[Row]] = {}
    for row in rows:
        by_candidate.setdefault(str(_get(row, "candidate") or ""), []).append(row)
    out: list[CandidateScore] = []
    for candidate in sorted(by_candidate):
        own = by_candidate[candidate]
        stats = grader_stats(own)
        means = {g: s.mean_score for g, s in stats.items()}
        w = dict(weights[candidate]) if weights and candidate in weights else None
        if w is None:
            w = {g: s.weight for g, s in stats.items()}
        else:
            stats = {
                g: GraderStat(s.grader, s.mean_score, s.pass_rate, s.count, s.errors, w.get(g, 0.0))
                for g, s in stats.items()
            }
        samples: dict[tuple[int, str], bool] = {}
        for row in own:
            key = (int(_get(row, "iteration")), str(_get(row, "sample_id")))
            samples[key] = samples.get(key, True) and _get(row, "passed") is True
        out.append(
            CandidateScore(
                candidate=candidate,
                samples=len(samples),
                equal_weight=equal_weight_score(means),
                weighted=weighted_score(means, w),
                pass_rate=sum(samples.values()) / len(samples),
                graders=tuple(stats.values()),
            )
        )
    return out
