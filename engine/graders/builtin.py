"""evalhouse's own evaluations as graders: analyzer metrics, judge rubric, claims, RAG.

These graders compute nothing themselves. The runner scores the sample as usual (the
``ResultRecord`` fields) and hands the values in ``GradeInput.values``; the grader maps
them to 0-1 so they can sit next to file graders in one weighted score:

* analyzer metrics ``accuracy``, ``completeness``, ``attribution``: 0-100, divided by 100;
* ``faithfulness`` (judge rubric faithfulness) and ``rag`` (RAG overall): 1-5, mapped by
  (s - 1) / 4, so the rubric's pass mark of 4 is 0.75;
* ``answer-synthesis``: the mean of judge faithfulness and completeness mapped the same
  way; it passes when BOTH mapped scores reach the threshold (the rubric's "both >= 4");
* ``claim-faithfulness``: already 0-1.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.graders.base import GradeInput, GraderError, GraderResult, SyncGrader, passes, values_of
from engine.graders.options import BUILTIN_TYPES
from engine.graders.spec import GraderSpec
from engine.models.metrics import METRICS

BUILTIN_FIELDS: dict[str, tuple[str, ...]] = {
    "accuracy": ("accuracy",),
    "completeness": ("completeness",),
    "attribution": ("attribution",),
    "faithfulness": ("judge_faithfulness",),
    "answer-synthesis": ("judge_faithfulness", "judge_completeness"),
    "claim-faithfulness": ("claim_faithfulness",),
    "rag": ("rag_overall",),
}
"""The ``ResultRecord`` fields each built-in reads."""

_SCALES: dict[str, tuple[float, float]] = {
    kind: (METRICS[fields[0]].scale.low, METRICS[fields[0]].scale.high or 0.0)
    for kind, fields in BUILTIN_FIELDS.items()
}
"""The native scale of each built-in's fields (``engine.models.metrics``)."""


def to_unit(name: str, value: float) -> float:
    """Map a built-in's native value to 0-1 (0-100 by /100, 1-5 by (s-1)/4, 0-1 as is).

    Raises ValueError for a value outside its scale: a 0 on a 1-5 scale is a bug upstream,
    and clamping would hide it.
    """
    low, high = _SCALES[name]
    if not low - 1e-9 <= value <= high + 1e-9:
        raise ValueError(f"{value:g} is outside the {low:g}-{high:g} scale of {name}")
    return min(1.0, max(0.0, (value - low) / (high - low)))


class BuiltinGrader(SyncGrader):
    """A built-in evaluation read from the sample's computed values."""

    def __init__(self, spec: GraderSpec) -> None:
        super().__init__(spec)
        if spec.type not in BUILTIN_TYPES:
            raise ValueError(f"{spec.type!r} is not a built-in evaluation")
        self._fields = BUILTIN_FIELDS[spec.type]
        self._threshold = spec.threshold if spec.threshold is not None else 0.75

    @property
    def needs_values(self) -> frozenset[str]:
        """The ``ResultRecord`` fields this built-in reads."""
        return frozenset(self._fields)

    def grade_sync(self, sample: GradeInput) -> GraderResult:
        """Map the computed values to a score. Raises GraderError when one is missing."""
        return self.grade_values(sample.values)

    def grade_values(self, values: Mapping[str, object]) -> GraderResult:
        """Map ``values`` (ResultRecord fields by name) to a score."""
        kind = self.spec.type
        found = values_of(values, self._fields)
        missing = [name for name, value in found.items() if value is None]
        if missing:
            error = values.get("error")
            why = f" (the sample failed: {error})" if error else ""
            raise GraderError(
                f"built-in {kind!r} needs {', '.join(missing)}, which the sample does not have{why}"
            )
        try:
            units = {
                name: to_unit(kind, value) for name, value in found.items() if value is not None
            }
        except ValueError as err:
            raise GraderError(f"built-in {kind!r}: {err}") from err
        thr = self._threshold
        if kind == "answer-synthesis":
            f, c = units["judge_faithfulness"], units["judge_completeness"]
            score = (f + c) / 2
            passed = passes(f, thr) and passes(c, thr)
            reason = (
                f"judge faithfulness {found['judge_faithfulness']:g}/5, completeness "
                f"{found['judge_completeness']:g}/5 -> {score:.3f}; "
                f"{'both' if passed else 'not both'} at or above {thr:g}"
            )
            return GraderResult(passed=passed, score=score, reason=reason)
        (name,) = self._fields
        raw, score = found[name], units[name]
        low, high = _SCALES[kind]
        passed = passes(score, thr)
        scale = "" if (low, high) == (0.0, 1.0) else f" of {low:g}-{high:g}"
        return GraderResult(
            passed=passed,
            score=score,
            reason=f"{name} {raw:g}{scale} -> {score:.3f} "
            f"({'at or above' if passed else 'below'} threshold {thr:g})",
        )
