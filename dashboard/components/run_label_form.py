"""The Runs page's form that renames, tags, moves to another series or archives a run: a
``run_labels`` lake record that ingest applies (the dashboard never writes the warehouse).
It is built only while its expander is open."""

from __future__ import annotations

from typing import Any

import streamlit as st

from dashboard import data
from dashboard.components.safe import safe_text
from dashboard.feedback import FeedbackError, parse_tags, save_run_label

LABEL_OPEN = "runs_label_open"
"""Whether the "Rename, tag, ..." expander is open (its session state key)."""


def run_label_form(run_id: str, row: dict[str, Any]) -> None:
    """The form for ``row`` (the run's ``runs_detail`` row), behind an expander that
    builds it when opened (opening runs the page again)."""
    with st.expander(
        "Rename, tag, move to another series or archive",
        icon=":material/edit:",
        key=LABEL_OPEN,
        on_change="rerun",
    ) as section:
        if section.open:
            _form(run_id, row)


def _form(run_id: str, row: dict[str, Any]) -> None:
    st.caption(
        "Saved as a record in the lake; the new name, tags, series and archive state show "
        "after the next ingest. Archived runs are hidden from every page unless Show "
        "archived runs is on in the sidebar."
    )
    with st.form(key=f"runs_label_{run_id}"):
        new_name = st.text_input("Name", value=row["name"], key=f"runs_label_name_{run_id}")
        new_tags = st.text_input(
            "Tags (comma-separated)",
            value=", ".join(row["tags"] or []),
            key=f"runs_label_tags_{run_id}",
        )
        new_series = st.text_input(
            "Series",
            value=row["series"] or "",
            key=f"runs_label_series_{run_id}",
            help="Runs of one series are compared with each other: a run's default baseline "
            "is the previous completed run of its series.",
        )
        archive = st.checkbox(
            "Archived", value=bool(row["archived"]), key=f"runs_label_archived_{run_id}"
        )
        who = st.text_input("Your name", key=f"runs_label_by_{run_id}")
        saved = st.form_submit_button("Save")
    if not saved:
        return
    name_change = new_name if new_name.strip() != row["name"] else None
    parsed_tags = parse_tags(new_tags)
    unchanged = sorted(set(parsed_tags)) == sorted(set(row["tags"] or []))
    tags_change = None if unchanged else parsed_tags
    archive_change = archive if archive != bool(row["archived"]) else None
    series_change = new_series if new_series.strip() != (row["series"] or "") else None
    try:
        save_run_label(
            data.home_paths().lake,
            run_id,
            name=name_change,
            tags=tags_change,
            archived=archive_change,
            series=series_change,
            labelled_by=who,
        )
    except FeedbackError as exc:
        st.error(safe_text(exc))
    else:
        st.success(f"Saved the change to {safe_text(run_id)}; it shows after the next ingest.")
