"""One sample of two runs (or candidates) next to each other: scores, the highlighted
response and the claims each missed or contradicted."""

from __future__ import annotations

from typing import Any

import polars as pl
import streamlit as st

from dashboard import data, formats
from dashboard.components.answer import show_answer_note
from dashboard.components.highlighter import legend_html, render_response
from dashboard.components.html_table import Column, show_table
from dashboard.components.review_form import rubric_label
from dashboard.components.safe import safe_text
from dashboard.components.text_diff import diff_counts, diff_html
from warehouse.queries import SampleRef

SIDE_BY_SIDE_OPEN = "compare_side_open"
"""Whether the Compare page's "Side by side" expander is open (its session state key)."""


def _scores(result: dict[str, Any]) -> dict[str, str]:
    return {
        "Accuracy": formats.score(result["accuracy"]),
        "Completeness": formats.score(result["completeness"]),
        "Attribution": formats.score(result["attribution"]),
        "Judge faithfulness (1-5)": formats.score(result["judge_faithfulness"], 1, 5),
        "Judge completeness (1-5)": formats.score(result["judge_completeness"], 1, 5),
        "Rubric pass": rubric_label(result) or formats.NA,
        "Claim faithfulness (0-1)": formats.score(result["claim_faithfulness"], 0, 1),
    }


def _side(title: str, ref: SampleRef) -> None:
    detail = data.query(data.sample_detail, ref)
    st.markdown(f"**{safe_text(title)}**")
    if detail["result"].is_empty():
        st.info("No result for this sample on this side.")
        return
    result = detail["result"].row(0, named=True)
    if result["error"]:
        st.error("This sample failed to score")
        st.code(result["error"], language=None, wrap_lines=True)
    show_answer_note(result)
    scores = _scores(result)
    # small tables as HTML, not grids: Compare draws two sides of up to three each
    show_table(
        pl.DataFrame({"Score": list(scores), "Value": list(scores.values())}),
        {"Value": Column(align_right=True)},
        name="side_scores",
    )
    marked = render_response(
        result["response"] or "",
        detail["highlights"].to_dicts(),
        detail["verdicts"].to_dicts(),
        detail["attributions"].to_dicts(),
    )
    st.html(legend_html() + marked.html)
    claims = detail["claims"]
    if claims.height:
        # A contradicted claim is stated wrongly, not left out: its own count and list.
        wrong = claims.filter(~claims["found"] & (claims["status"] == "contradicted"))
        missing = claims.filter(
            ~claims["found"] & (claims["status"].fill_null("") != "contradicted")
        )
        found = claims.height - wrong.height - missing.height
        st.caption(
            f"Iteration {ref.iteration}: {found} of {claims.height} expected claims found, "
            f"{wrong.height} contradicted, {missing.height} missing"
        )
        if wrong.height:
            show_table(
                wrong.select(pl.col("claim_text").alias("Contradicted claim")),
                name="side_contradicted",
            )
        if missing.height:
            show_table(
                missing.select(pl.col("claim_text").alias("Missing claim")), name="side_missing"
            )


def side_by_side(baseline: tuple[str, SampleRef], challenger: tuple[str, SampleRef]) -> None:
    """Draw the two sides in two columns: ``(title, sample)`` each, baseline on the left,
    then a word diff of the two answers."""
    left, right = st.columns(2)
    with left:
        _side(*baseline)
    with right:
        _side(*challenger)
    answers = [_response(ref) for _, ref in (baseline, challenger)]
    if all(a is not None for a in answers) and answers[0] != answers[1]:
        before, after = str(answers[0]), str(answers[1])
        removed, added = diff_counts(before, after)
        words = "word" if removed == 1 else "words"
        with st.expander(f"What changed in the answer: {removed} {words} out, {added} in"):
            st.html(diff_html(before, after))


def _response(ref: SampleRef) -> str | None:
    result = data.query(data.sample_detail, ref)["result"]
    return None if result.is_empty() else str(result["response"][0] or "")
