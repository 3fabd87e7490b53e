"""Runs: the runs going on now (progress, pause, continue, cancel), then every run with its
state, timing, headline numbers and what scored it; one run's config on demand; rename, tag,
archive or restore a run (a ``run_labels`` lake record that ingest applies: the dashboard
never writes the warehouse)."""

from __future__ import annotations

import json

import polars as pl
import streamlit as st

from dashboard import data, formats
from dashboard.components import tables
from dashboard.components.downloads import download_csv
from dashboard.components.html_table import Column, show_table
from dashboard.components.identity import access, require_sign_in, signed_in_user
from dashboard.components.pickers import pick_run, runs_or_stop
from dashboard.components.reanalysis_form import reanalysis_section
from dashboard.components.review_form import ingest_button
from dashboard.components.run_control import live_runs_section
from dashboard.components.run_label_form import run_label_form
from dashboard.components.synthesis import show_low_faithfulness
from dashboard.components.url_state import set_url
from warehouse import queries as q

st.title("Runs")

rules = access()
# Above everything, and before the warehouse is asked: a first run is live before any
# ingest, and a person opening Runs to stop one must not scroll for it.
st.subheader("Running now")
live_runs_section(rules.may_launch(signed_in_user(rules)))

runs = runs_or_stop()
# The same runs as the pickers: archived ones only when the sidebar toggle shows them.
detail = data.query(q.runs_detail).filter(pl.col("run_id").is_in(list(runs["run_id"])))
# The run id (long for real runs) and the embedder are in the picker and the facts below,
# not in this table: every column of it stays on screen at 1440 px.
overview = detail.with_columns(
    pl.when(pl.col("archived"))
    .then(pl.col("status") + " (archived)")
    .otherwise(pl.col("status"))
    .alias("status"),
    # the readable name here; the exact judge and its version are in the facts below
    pl.col("judge").map_elements(formats.judge_name, return_dtype=pl.String),
).select(
    "name",
    "status",
    "started_at",
    "duration_s",
    "samples",
    "test_set_version",
    "errors",
    "pass_rate_percent",
    "cost_usd",
    "judge",
    "tags",
)
tables.show(
    overview,
    key="runs_table",
    # Numbers get narrow columns so judge and embedder names (long with real models) fit
    # without a sideways scroll at 1440 px.
    formats={"duration_s": "%d", "pass_rate_percent": "%.1f", "cost_usd": formats.COST_PRINTF},
    status=st.column_config.TextColumn("Status", width="small"),
    started_at=st.column_config.DatetimeColumn("Started", format=formats.TIMESTAMP_GRID),
    duration_s=st.column_config.NumberColumn("Duration (s)", format="%d", width="small"),
    samples=st.column_config.NumberColumn("Samples", width="small"),
    test_set_version=st.column_config.NumberColumn(
        "Test set v", help="Version of the run's test set (its cases)", width="small"
    ),
    errors=st.column_config.NumberColumn("Errors", width="small"),
    pass_rate_percent=st.column_config.NumberColumn("Pass rate %", format="%.1f", width="small"),
    cost_usd=st.column_config.NumberColumn("Cost USD", format=formats.COST_PRINTF, width="small"),
    tags=st.column_config.ListColumn("Tags", width="small"),
)
download_csv(detail, "runs.csv", key="runs_csv")

st.subheader("One run")
run_id = pick_run(runs, "runs_detail_run")
set_url(run=run_id)
row = detail.filter(detail["run_id"] == run_id).row(0, named=True)
facts = {
    "Run ID": row["run_id"],
    "Status": row["status"],
    "Series": row["series"] or formats.NA,
    "Started": formats.timestamp(row["started_at"]),
    "Finished": formats.timestamp(row["finished_at"]),
    "Judge": row["judge"],
    "Judge prompt version": row["judge_prompt_version"] or formats.NA,
    "Embedder": row["embedder"],
    # a setting, not a score: all three decimals it is tuned to
    "Claim threshold": (
        formats.NA if row["claim_threshold"] is None else f"{row['claim_threshold']:.3f}"
    ),
    "Test set": row["test_set"],
    "Test set hash": row["test_set_hash"] or formats.NA,
    "Test set version": (
        formats.NA
        if row["test_set_version"] is None
        else f"{row['test_set_name']} v{row['test_set_version']}"
    ),
    "evalhouse version": row["version"],
    "Git commit": row["git_commit"] or formats.NA,
    "Tags": ", ".join(row["tags"] or []) or formats.NA,
    "Archived": "yes" if row["archived"] else "no",
    "Labelled by": row["labelled_by"] or formats.NA,
}
show_table(
    pl.DataFrame({"Field": list(facts), "Value": [str(v) for v in facts.values()]}),
    {"Field": Column(whole=True)},
    name="runs_facts",
    max_height_px=None,  # every field on screen, no inner scroll
)
st.caption("Config (JSON; options left unset are not shown)")
try:
    config = json.loads(row["config"] or "{}")
except json.JSONDecodeError:
    st.code(row["config"], language=None)
else:
    # An option left unset is null: drawn as a red NULL badge, it read like an error.
    st.json(formats.without_nulls(config), expanded=1)

st.subheader("Low-faithfulness analysis")
st.caption(
    "Per iteration: the answers the judge scored faithfulness 3 or below, by category, and "
    "the completeness failures, with examples and what to try."
)
show_low_faithfulness(run_id, data.query(q.run_low_faithfulness, run_id))

reanalysis_section(rules, require_sign_in(rules), run_id)

run_label_form(run_id, row)
ingest_button("runs_ingest")
