"""The no-answer label of a sample: a response that is empty or abstains (declines,
deflects, says it does not know) scores low for a different reason than a wrong answer, so
every place that shows a sample says so first."""

from __future__ import annotations

from typing import Any

NOTES = {
    "no answer": "No answer: the response is empty.",
    "abstained": "Abstained: the response declines, deflects or says it does not know.",
}
"""The note shown for each ``answer`` value of the view result_scores that is not a plain
answer (errors have their own message)."""


def answer_note(result: dict[str, Any]) -> str | None:
    """The note for a ``sample_result`` row, or None when the response answered (or the
    sample failed: the error says why)."""
    return NOTES.get(str(result.get("answer") or ""))


def show_answer_note(result: dict[str, Any]) -> None:
    """Draw the note as a warning box (fixed text only: nothing from data)."""
    import streamlit as st

    note = answer_note(result)
    if note is not None:
        st.warning(note, icon=":material/block:")
