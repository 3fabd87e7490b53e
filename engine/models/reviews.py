"""Records people write from the dashboard: reviews of a sample and labels of a run.

Both are lake records like the engine's own (``engine.lake.write_part``): the dashboard
never writes the warehouse, ingest loads them. Each submission is its own part file with
its own id, so two people saving at the same moment never overwrite each other.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field, model_validator

from engine.models.base import Frozen

ReviewItem = Literal["response", "claim", "verdict"]
ReviewLabel = Literal[
    "correct",
    "partly",
    "incorrect",
    "found",
    "missing",
    "contradicted",
    "agree",
    "disagree",
]

REVIEW_LABELS: dict[str, tuple[str, ...]] = {
    "response": ("correct", "partly", "incorrect"),
    "claim": ("found", "missing", "contradicted"),
    "verdict": ("agree", "disagree"),
}
"""The labels a reviewer may give each kind of item."""


class ReviewRecord(Frozen):
    """One person's judgment of one item of a sample: the response as a whole, one expected
    claim, or one of the judge's verdicts."""

    review_id: str
    """Id of the submission (every item marked in one save shares it; unique per save)."""
    run_id: str
    """Run of the reviewed sample."""
    iteration: int
    """Iteration of the reviewed sample."""
    sample_id: str
    """Test-case id."""
    candidate: str = ""
    """Candidate whose response was reviewed."""
    item: ReviewItem
    """What was reviewed: response, claim (an expected claim) or verdict (a judge verdict)."""
    item_id: str = ""
    """The claim's ``claim_id``, the verdict's ``claim_index`` as text; empty for the
    response."""
    item_text: str = ""
    """The claim's text when it was reviewed (for reading the record on its own)."""
    label: ReviewLabel
    """correct / partly / incorrect (response), found / missing / contradicted (claim),
    agree / disagree (verdict)."""
    machine_label: str | None = None
    """What evalhouse said when the person reviewed it: the claim's status, the verdict, or
    the rubric's pass / fail for the response."""
    comment: str = ""
    """The reviewer's comment on the submission."""
    reviewer: str
    """Name the reviewer gave."""
    reviewed_at: datetime
    """When the review was saved (UTC, naive)."""

    @model_validator(mode="after")
    def _label_fits_item(self) -> ReviewRecord:
        if self.label not in REVIEW_LABELS[self.item]:
            allowed = ", ".join(REVIEW_LABELS[self.item])
            raise ValueError(f"a {self.item} review is one of {allowed}, not {self.label!r}")
        if not self.reviewer.strip():
            raise ValueError("a review needs the reviewer's name")
        return self


class RunLabelRecord(Frozen):
    """A person renamed, tagged, archived or restored a run; the latest value of each field
    wins, and ingest applies the name to ``runs.name``."""

    label_id: str
    """Id of this change (unique per save)."""
    run_id: str
    """The run it applies to."""
    name: str | None = None
    """The run's new name; null keeps the current one."""
    tags: list[str] | None = Field(default=None)
    """The run's tags (replacing earlier ones); null keeps the current tags."""
    archived: bool | None = None
    """True archives the run (hidden by default), False restores it; null keeps it."""
    series: str | None = None
    """The series the run belongs to from now on (view ``run_series``); null keeps it."""
    labelled_by: str = ""
    """Who made the change."""
    labelled_at: datetime
    """When the change was saved (UTC, naive)."""
