"""Thumbs up or down and a comment on one response, right where a list shows it (the
Sample finder and Compare): a quick review without opening the sample's full form.

Thumbs up saves the response as ``correct`` and thumbs down as ``incorrect``; both are
ordinary ``reviews`` records, so they count on Judge agreement like the full form's.
"""

from __future__ import annotations

import streamlit as st

from dashboard import data
from dashboard.components.identity import access, signed_in_user
from dashboard.components.review_form import (
    current_labels,
    known_reviewer,
    rubric_label,
    save_marks,
)
from dashboard.components.safe import safe_text
from dashboard.feedback import ReviewMark
from warehouse.queries import SampleRef

THUMBS_LABELS = ("incorrect", "correct")
"""The response label of each ``st.feedback("thumbs")`` value: 0 is down, 1 is up."""


def quick_review(ref: SampleRef, *, key: str, title: str = "Quick review") -> None:
    """A one-line review of ``ref``'s response: thumbs, a comment and (when nobody signed
    in) the reviewer's name; shows the reviewer's current label."""
    rules = access()
    user = signed_in_user(rules)
    if not rules.may_review(user):
        return
    reviewer_now = known_reviewer()
    current = current_labels(ref, reviewer_now).get(("response", ""))
    prefix = f"{key}_{ref.run_id}_{ref.sample_id}_{ref.iteration}_{ref.candidate}"
    note = f"{title} of {safe_text(ref.sample_id)}"
    if current is not None:
        note += f": {safe_text(reviewer_now or '')} said {safe_text(current[0])}"
    with st.form(key=prefix, clear_on_submit=False, border=False):
        st.caption(note)
        thumbs_col, comment_col, name_col, save_col = st.columns([1, 4, 2, 1])
        with thumbs_col:
            thumbs = st.feedback(
                "thumbs",
                key=f"{prefix}_thumbs",
                default=THUMBS_LABELS.index(current[0])
                if current and current[0] in THUMBS_LABELS
                else None,
            )
        comment = comment_col.text_input(
            "Comment",
            value=current[1] if current else "",
            placeholder="Comment (optional)",
            label_visibility="collapsed",
            key=f"{prefix}_comment",
        )
        if rules.user_header is None:
            reviewer = name_col.text_input(
                "Your name",
                value=reviewer_now or "",
                placeholder="Your name",
                label_visibility="collapsed",
                key=f"{prefix}_reviewer",
            )
        else:
            reviewer = user or ""
            name_col.caption(f"as {safe_text(reviewer)}")
        submitted = save_col.form_submit_button("Save")
    if not submitted:
        return
    if thumbs is None:
        st.error("Choose thumbs up or down before saving.")
        return
    result = data.query(data.sample_detail, ref)["result"]
    machine = rubric_label(result.row(0, named=True)) if result.height else None
    label = THUMBS_LABELS[thumbs]
    if save_marks(ref, reviewer, comment, [ReviewMark("response", label, machine_label=machine)]):
        st.success(
            f"Saved: {safe_text(ref.sample_id)} is {label}, by {safe_text(reviewer.strip())}."
        )
