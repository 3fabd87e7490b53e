"""Compare's note when one run re-analyses the other: the answers are the same, only the
ground truth changed, so every difference is the truth's (or the judge's), not the system's."""

from __future__ import annotations

import json
from pathlib import PurePath

import streamlit as st

from dashboard import data
from dashboard.components.safe import safe_text
from warehouse import queries as q


def reanalysis_of(run_id: str) -> tuple[str | None, str | None]:
    """(the run ``run_id`` re-analyses, its ground-truth file), from the run's config."""
    info = data.query(q.run_info, run_id)
    try:
        config = json.loads((info["config"] if info else None) or "{}")
    except json.JSONDecodeError:
        return None, None
    if not isinstance(config, dict):
        return None, None
    source, truth = config.get("reanalysis_of"), config.get("ground_truth_file")
    # The file's name only: a page never shows where files live on the server.
    return (str(source) if source else None), (PurePath(str(truth)).name if truth else None)


def show_reanalysis_relation(challenger: str, baseline: str) -> None:
    """Say "same answers, new truth" when one run is a re-analysis of the other."""
    for newer, older in ((challenger, baseline), (baseline, challenger)):
        source, truth = reanalysis_of(newer)
        if source == older:
            st.info(
                f"Same answers, new truth: {safe_text(newer)} re-scored the answers of "
                f"{safe_text(older)} against {safe_text(truth or 'new ground truth')}. "
                "Differences below come from the ground truth, not from the system."
            )
            return


def show_reanalysis_note(run_id: str) -> None:
    """The Overview's note when the run is a re-analysis: the answers are another run's."""
    source, truth = reanalysis_of(run_id)
    if source is not None:
        st.info(
            f"Re-analysis: this run re-scored the answers of {safe_text(source)} against "
            f"{safe_text(truth or 'new ground truth')}. Its changes come from the ground "
            "truth (or the scoring), not from the system's answers.",
            icon=":material/history:",
        )
