"""The Sample page's review form: a person marks the response, each expected claim and each
judge verdict, with a comment and their name; saved as a ``reviews`` lake record."""

from __future__ import annotations

from typing import Any

import polars as pl
import streamlit as st

from dashboard import data, formats
from dashboard.background_ingest import last_outcome, request_ingest
from dashboard.components import tables
from dashboard.components.identity import access, signed_in_user
from dashboard.components.safe import safe_text
from dashboard.feedback import FeedbackError, ReviewMark, save_review
from engine.models import REVIEW_LABELS
from engine.processes import evalhouse_command, run_captured
from warehouse import queries as q
from warehouse.queries import SampleRef

NOT_REVIEWED = "not reviewed"

MAX_ITEMS = 60
"""Claims (and verdicts) offered in the form at most: a longer list is unreadable."""

INGEST_TIMEOUT_S = 180.0

REVIEWER_KEY = "reviewer_name"
"""Session key of the name a reviewer typed: asked once, then offered in every form."""

_SAVED_KEY = "saved_review_labels"
"""Session key of labels saved in this session, shown until an ingest brings them back."""

Labels = dict[tuple[str, str], tuple[str, str]]
"""A reviewer's current labels of one sample: ``(item, item_id) -> (label, comment)``."""


def known_reviewer() -> str | None:
    """Who is reviewing: the signed-in user, else the name typed earlier in this session."""
    rules = access()
    if rules.user_header is not None:
        return signed_in_user(rules)
    name = str(st.session_state.get(REVIEWER_KEY, "")).strip()
    return name or None


def current_labels(ref: SampleRef, reviewer: str | None) -> Labels:
    """The reviewer's latest label of each item of the sample: from the warehouse, then
    what they saved in this session (newer, and maybe not ingested yet)."""
    if reviewer is None:
        return {}
    earlier = data.query(q.sample_reviews, ref).filter(pl.col("reviewer") == reviewer)
    labels: Labels = {
        (str(r["item"]), str(r["item_id"] or "")): (str(r["label"]), str(r["comment"] or ""))
        for r in earlier.iter_rows(named=True)
    }
    saved: dict[tuple[SampleRef, str], Labels] = st.session_state.get(_SAVED_KEY, {})
    labels.update(saved.get((ref, reviewer), {}))
    return labels


def save_marks(ref: SampleRef, reviewer: str, comment: str, marks: list[ReviewMark]) -> bool:
    """Save a review to the lake, say so (or why not), and remember the reviewer and the
    labels for the forms of this session; True when saved."""
    try:
        save_review(
            data.home_paths().lake,
            run_id=ref.run_id,
            iteration=ref.iteration,
            sample_id=ref.sample_id,
            candidate=ref.candidate,
            reviewer=reviewer,
            comment=comment,
            marks=marks,
        )
    except FeedbackError as exc:
        st.error(safe_text(exc))
        return False
    # The review counts at once: Judge agreement and the queue read the warehouse.
    request_ingest(data.home_paths().home)
    name = reviewer.strip()
    if access().user_header is None:
        st.session_state[REVIEWER_KEY] = name
    saved: dict[tuple[SampleRef, str], Labels] = st.session_state.setdefault(_SAVED_KEY, {})
    saved.setdefault((ref, name), {}).update(
        {(m.item, m.item_id): (m.label, comment.strip()) for m in marks}
    )
    return True


def _choice(options: list[str], current: tuple[str, str] | None) -> int:
    """The radio index of a current label (0, "not reviewed", when there is none)."""
    return options.index(current[0]) if current and current[0] in options else 0


def _claim_status(row: dict[str, Any]) -> str:
    status = row.get("status")
    if status:
        return str(status)
    return "found" if row.get("found") else "missing"


def _options(item: str) -> list[str]:
    return [NOT_REVIEWED, *REVIEW_LABELS[item]]


_INGEST_MESSAGE = "ingest_message"
"""Session key of the last "Ingest now" outcome, shown after the rerun that follows it."""


def ingest_now() -> tuple[bool, str]:
    """Run ``evalhouse ingest`` (a separate process: the dashboard never writes the
    warehouse itself); returns whether it succeeded and its last line of output."""
    paths = data.home_paths()
    data.warehouse().release()  # the page run's read connection would make ingest wait
    try:
        code, out, err = run_captured(
            [*evalhouse_command(), "ingest", "--home", str(paths.home)], INGEST_TIMEOUT_S
        )
    except OSError as exc:
        return False, f"did not finish: {exc}"
    if code is None:
        return False, f"did not finish within {INGEST_TIMEOUT_S:.0f} s"
    lines = (out or err or "").strip().splitlines()
    return code == 0, lines[-1] if lines else f"exit code {code}"


def ingest_button(key: str) -> None:
    """An "Ingest now" button; after an ingest the page runs again (so it shows the new
    data) and says what the ingest did."""
    background = last_outcome(data.home_paths().home)
    if background is not None and background[0] != 0:
        st.warning(
            f"The ingest after the last save did not finish ({safe_text(background[1])}): "
            "the review is kept in the lake; ingest now to load it."
        )
    outcome = st.session_state.pop(_INGEST_MESSAGE, None)
    if outcome is not None:
        ok, message = outcome
        if ok:
            st.success(f"Ingest: {safe_text(message)}")
        else:
            st.error(f"Ingest failed: {safe_text(message)}")
    if st.button("Ingest now", key=key, help="Load new lake records into the warehouse."):
        with st.spinner("Ingesting…"):
            st.session_state[_INGEST_MESSAGE] = ingest_now()
        st.rerun()


def rubric_label(result: dict[str, Any]) -> str | None:
    """What evalhouse said of the response: the rubric's pass or fail."""
    passed = result.get("passed")
    return None if passed is None else ("pass" if passed else "fail")


def _marks(
    prefix: str,
    result: dict[str, Any],
    claims: pl.DataFrame,
    verdicts: pl.DataFrame,
    labels: Labels,
) -> list[ReviewMark]:
    """The form's widgets, set to the reviewer's current labels, read back as the items
    the reviewer marked."""
    marks: list[ReviewMark] = []
    rubric = rubric_label(result)
    options = _options("response")
    label = st.radio(
        "The response is",
        options,
        index=_choice(options, labels.get(("response", ""))),
        horizontal=True,
        key=f"{prefix}_response",
        help="correct: right and complete; partly: right but incomplete or partly wrong; "
        "incorrect: wrong or misleading.",
    )
    if label != NOT_REVIEWED:
        marks.append(ReviewMark("response", label, machine_label=rubric))
    if claims.height:
        st.markdown(f"**Expected claims** ({min(claims.height, MAX_ITEMS)} of {claims.height})")
    for row in claims.head(MAX_ITEMS).iter_rows(named=True):
        status = _claim_status(row)
        options = _options("claim")
        label = st.radio(
            f"{safe_text(row['claim_id'])}: {safe_text(row['claim_text'])} "
            f"(evalhouse: {safe_text(status)})",
            options,
            index=_choice(options, labels.get(("claim", str(row["claim_id"])))),
            horizontal=True,
            key=f"{prefix}_claim_{row['claim_id']}",
        )
        if label != NOT_REVIEWED:
            item_id, text = str(row["claim_id"]), str(row["claim_text"])
            marks.append(ReviewMark("claim", label, item_id, text, status))
    if verdicts.height:
        st.markdown(f"**Judge verdicts** ({min(verdicts.height, MAX_ITEMS)} of {verdicts.height})")
    for row in verdicts.head(MAX_ITEMS).iter_rows(named=True):
        options = _options("verdict")
        label = st.radio(
            f"{row['claim_index']}: {safe_text(row['claim_text'])} "
            f"(judge: {safe_text(row['verdict'])})",
            options,
            index=_choice(options, labels.get(("verdict", str(row["claim_index"])))),
            horizontal=True,
            key=f"{prefix}_verdict_{row['claim_index']}",
        )
        if label != NOT_REVIEWED:
            item_id, text = str(row["claim_index"]), str(row["claim_text"])
            marks.append(ReviewMark("verdict", label, item_id, text, str(row["verdict"])))
    return marks


def review_section(
    ref: SampleRef, result: dict[str, Any], claims: pl.DataFrame, verdicts: pl.DataFrame
) -> None:
    """Earlier reviews of the sample, the form to add one, and an "Ingest now" button."""
    st.subheader("Human review")
    earlier = data.query(q.sample_reviews, ref)
    if earlier.height:
        st.caption(f"{earlier.height} item reviews (each reviewer's latest per item)")
        # The item's text is in the claims and verdicts tables above (by id): left out here
        # so every column stays on screen at 1440 px.
        shown = earlier.select(
            "reviewer", "reviewed_at", "item", "item_id", "label", "machine_label", "comment"
        )
        tables.grid(
            shown,
            column_config=tables.column_config(
                shown,
                reviewed_at=st.column_config.DatetimeColumn(
                    "Reviewed", format=formats.TIMESTAMP_GRID
                ),
                item_id=st.column_config.TextColumn("Item ID", width="small"),
                machine_label=st.column_config.TextColumn("evalhouse said"),
                comment=st.column_config.TextColumn("Comment", width="medium"),
            ),
            key=f"review_earlier_{ref.run_id}_{ref.sample_id}_{ref.iteration}_{ref.candidate}",
        )
    else:
        st.caption("Nobody has reviewed this sample yet (or the reviews are not ingested).")
    prefix = f"review_{ref.run_id}_{ref.sample_id}_{ref.iteration}_{ref.candidate}"
    rules = access()
    user = signed_in_user(rules)
    if not rules.may_review(user):
        st.caption("Reviewing is for users the operator lets review.")
        return
    reviewer_now = known_reviewer()
    labels = current_labels(ref, reviewer_now)
    if labels:
        st.caption(
            f"The form shows {safe_text(reviewer_now or '')}'s current labels; saving again "
            "replaces the items you change."
        )
    with st.form(key=prefix, clear_on_submit=False):
        marks = _marks(prefix, result, claims, verdicts, labels)
        comments = {c for _, c in labels.values() if c}
        comment = st.text_area(
            "Comment", value=next(iter(comments)) if len(comments) == 1 else "",
            key=f"{prefix}_comment",
        )  # fmt: skip
        if rules.user_header is None:
            reviewer = st.text_input(
                "Your name", value=reviewer_now or "", key=f"{prefix}_reviewer"
            )
        else:  # signed in: the review is theirs, not a name anyone could type
            reviewer = user or ""
            st.caption(f"Reviewing as {safe_text(reviewer)}")
        submitted = st.form_submit_button("Save review")
    if submitted and save_marks(ref, reviewer, comment, marks):
        st.success(
            f"Saved {len(marks)} item reviews by {safe_text(reviewer.strip())}. They show "
            "here and on Judge agreement in a few seconds (ingested in the background)."
        )
    ingest_button(f"{prefix}_ingest")
