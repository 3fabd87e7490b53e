"""What people write from the dashboard: sample reviews and run labels, as lake records.

The dashboard never writes the warehouse: each save is one new part in the lake, written by
the engine's atomic writer (``engine.lake.write_part``: a temporary file published with a
hard link that never replaces an existing part), and ingest loads it like any other record.
Every save has its own uuid and its own part file, so two people saving at the same moment
both keep what they saved.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from engine.clock import utcnow
from engine.lake import write_part
from engine.models import ReviewRecord, RunLabelRecord

MAX_NAME = 200
"""Longest reviewer or run name kept (longer ones are cut)."""

MAX_COMMENT = 5_000
"""Longest comment kept."""


class FeedbackError(ValueError):
    """A review or label that cannot be saved; the message says why, for the person."""


@dataclass(frozen=True)
class ReviewMark:
    """One item a reviewer marked: what it is, its label, and what evalhouse said."""

    item: str
    """response, claim or verdict."""
    label: str
    """The reviewer's label (see ``engine.models.REVIEW_LABELS``)."""
    item_id: str = ""
    """The claim id, or the verdict's claim index as text; empty for the response."""
    item_text: str = ""
    """The claim's text."""
    machine_label: str | None = None
    """What evalhouse said about the item when it was reviewed."""


def save_review(
    lake: Path,
    *,
    run_id: str,
    iteration: int,
    sample_id: str,
    candidate: str,
    reviewer: str,
    comment: str,
    marks: Sequence[ReviewMark],
) -> Path:
    """Write one review (every marked item, one shared review id) as a new lake part."""
    reviewer = reviewer.strip()[:MAX_NAME]
    if not reviewer:
        raise FeedbackError("Enter your name: every review says who made it.")
    if not marks:
        raise FeedbackError("Mark the response, a claim or a verdict before saving.")
    review_id = uuid.uuid4().hex
    at = utcnow()
    try:
        records = [
            ReviewRecord.model_validate(
                {
                    "review_id": review_id,
                    "run_id": run_id,
                    "iteration": iteration,
                    "sample_id": sample_id,
                    "candidate": candidate,
                    "item": m.item,
                    "item_id": m.item_id,
                    "item_text": m.item_text,
                    "label": m.label,
                    "machine_label": m.machine_label,
                    "comment": comment.strip()[:MAX_COMMENT],
                    "reviewer": reviewer,
                    "reviewed_at": at,
                }
            )
            for m in marks
        ]
    except ValidationError as exc:
        raise FeedbackError(f"The review cannot be saved: {exc.errors()[0]['msg']}") from exc
    path = write_part(lake, "reviews", run_id, iteration, records)
    assert path is not None  # records is not empty
    return path


def save_run_label(
    lake: Path,
    run_id: str,
    *,
    name: str | None = None,
    tags: Sequence[str] | None = None,
    archived: bool | None = None,
    series: str | None = None,
    labelled_by: str = "",
) -> Path:
    """Write one rename / retag / archive / move to another series of a run as a new lake
    part (None = unchanged)."""
    if name is not None:
        name = name.strip()[:MAX_NAME]
        if not name:
            raise FeedbackError("A run's name cannot be empty.")
    if series is not None:
        series = series.strip()[:MAX_NAME]
        if not series:
            raise FeedbackError("A run's series cannot be empty.")
    clean_tags = None
    if tags is not None:
        clean_tags = sorted({t.strip()[:MAX_NAME] for t in tags if t.strip()})
    if name is None and clean_tags is None and archived is None and series is None:
        raise FeedbackError("Nothing changed: give a new name, tags or series, or archive the run.")
    record = RunLabelRecord(
        label_id=uuid.uuid4().hex,
        run_id=run_id,
        name=name,
        tags=clean_tags,
        archived=archived,
        series=series,
        labelled_by=labelled_by.strip()[:MAX_NAME],
        labelled_at=utcnow(),
    )
    path = write_part(lake, "run_labels", run_id, 0, [record])
    assert path is not None
    return path


def parse_tags(text: str) -> list[str]:
    """Tags typed as one comma-separated line."""
    return [t.strip() for t in text.split(",") if t.strip()]
