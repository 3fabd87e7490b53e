"""A scorer added the way a maintainer adds one: this file and one ``register`` call.

It reads the analyzer's accuracy (so it runs in a later stage), writes two named metrics
to ``sample_scores`` and flags long answers; a response containing ``SCORER_BOOM`` makes
it raise, to show that a failing scorer gives exactly one error row.
"""

from __future__ import annotations

from engine.models import SampleScoreRecord
from engine.scorers import (
    BaseScorer,
    SampleInput,
    ScoreOutcome,
    ScorerContext,
    ScorerError,
    ScorerFactory,
    register,
    unregister,
)

NAME = "response-length"


class LengthScorer(BaseScorer):
    """Words in the response, and words per accuracy point."""

    name = NAME
    reads = frozenset({"accuracy"})
    tables = frozenset({"sample_scores"})

    async def score(self, sample: SampleInput) -> ScoreOutcome:
        if "SCORER_BOOM" in sample.response:
            raise ScorerError("cannot count words in an exploding answer")
        words = len(sample.response.split())
        accuracy = sample.values.get("accuracy")
        rows = [
            SampleScoreRecord(
                **sample.key.model_dump(), scorer=NAME, metric="words", value=float(words)
            ),
            SampleScoreRecord(
                **sample.key.model_dump(),
                scorer=NAME,
                metric="accuracy_seen",
                value=float(accuracy) if isinstance(accuracy, int | float) else None,
                label="long" if words > 5 else "short",
                reason=f"{words} words",
            ),
        ]
        return ScoreOutcome(
            records={"sample_scores": rows}, flags=("long_answer",) if words > 5 else ()
        )


def install() -> None:
    """Register the scorer for every run of this process."""
    register(ScorerFactory(NAME, lambda context: LengthScorer()))


def uninstall() -> None:
    """Take it out again."""
    unregister(NAME)


__all__ = ["ScorerContext", "install", "uninstall"]
