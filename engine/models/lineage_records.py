"""Lineage of a run's candidates (lake and warehouse table ``candidate_lineage``,
registered in ``LAKE_TABLES``): which candidate derives from which, and by what edit, as
the files said when the run started, so scores can be read as a family tree."""

from __future__ import annotations

from engine.models.base import Frozen


class CandidateLineageRecord(Frozen):
    """One candidate of a run with its parent and edit; written once when the run starts."""

    run_id: str
    """Run the candidate answered in."""
    candidate: str
    """Candidate id."""
    family: str
    """The folder the candidate file is in (its own id for a file at the top)."""
    parent: str | None = None
    """Id of the candidate it derives from (the ``parent`` of its file, else the family's
    base); null for a base."""
    edit: str = ""
    """How it derives from ``parent``, as canonical JSON (``{"kind":"ablate",...}``,
    written by ``evalhouse candidates vary``); empty when the file records none."""
    variant_label: str | None = None
    """Short label of the variant (``ablate-2``, ``tone-concise``, the file stem)."""
    name: str = ""
    """Human name of the candidate."""
    prompt_sha256: str = ""
    """sha256 of the candidate's system prompt, so two runs of a changed file differ."""
