"""The answer-synthesis low-faithfulness analysis of a run, per iteration: the insight text,
a count per failure category and the examples the engine kept (``iteration_metrics``
``low_faithfulness`` JSON, written by ``engine.scoring.synthesis``)."""

from __future__ import annotations

import json
from typing import Any

import polars as pl

EXAMPLE_SCHEMA = {
    "category": pl.String,
    "sample_id": pl.String,
    "question": pl.String,
    "reasoning": pl.String,
}


def parse_analysis(text: str | None) -> dict[str, Any]:
    """The stored JSON as a dict; ``{}`` when it is missing or unreadable (older runs)."""
    try:
        value = json.loads(text or "{}")
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def analysis_tables(analysis: dict[str, Any]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``(categories, examples)``: one row per category (label, count) and one per example
    (category label, sample id, question, reasoning), in the engine's order."""
    cats: list[dict[str, Any]] = []
    examples: list[dict[str, Any]] = []
    for entry in (analysis.get("categories") or {}).values():
        if not isinstance(entry, dict):
            continue
        label = str(entry.get("label", ""))
        cats.append({"category": label, "samples": int(entry.get("count") or 0)})
        for ex in entry.get("examples") or []:
            examples.append(
                {
                    "category": label,
                    "sample_id": str(ex.get("sample_id", "")),
                    "question": str(ex.get("question", "")),
                    "reasoning": str(ex.get("reasoning", "")),
                }
            )
    return (
        pl.DataFrame(cats, schema={"category": pl.String, "samples": pl.Int64}),
        pl.DataFrame(examples, schema=EXAMPLE_SCHEMA),
    )


def show_low_faithfulness(run_id: str, frame: pl.DataFrame) -> None:
    """Draw the analysis of every iteration (and candidate) of ``run_id``."""
    import streamlit as st

    from dashboard.components import tables
    from dashboard.components.links import sample_picker
    from dashboard.components.safe import safe_text

    analysed = [
        (row, parse_analysis(row["low_faithfulness"])) for row in frame.iter_rows(named=True)
    ]
    analysed = [(row, a) for row, a in analysed if a.get("categories")]
    if not analysed:
        st.info("No judge scores in this run: nothing to analyse for low faithfulness.")
        return
    for row, analysis in analysed:
        title = f"Iteration {row['iteration']}"
        if row["candidate"]:
            title += f" · candidate {row['candidate']}"
        scored = analysis.get("scored", 0)
        with st.expander(f"{safe_text(title)} · {scored} scored answers", expanded=True):
            st.markdown(safe_text(analysis.get("insight", "")))
            cats, examples = analysis_tables(analysis)
            tables.show(cats, key=f"runs_lowf_cats_{row['iteration']}_{row['candidate']}")
            if examples.height:
                tables.show(examples, key=f"runs_lowf_ex_{row['iteration']}_{row['candidate']}")
                sample_picker(
                    examples.with_columns(pl.lit(int(row["iteration"])).alias("iteration")),
                    key=f"runs_lowf_open_{row['iteration']}_{row['candidate']}",
                    run_id=run_id,
                )
