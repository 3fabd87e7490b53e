"""Runs: every run with its state, timing, headline numbers and what scored it; one run's
config on demand."""

from __future__ import annotations

import json

import streamlit as st

from dashboard import data
from dashboard.components import tables
from dashboard.components.downloads import download_csv
from dashboard.components.pickers import run_label, runs_or_stop
from dashboard.components.synthesis import show_low_faithfulness
from dashboard.components.url_state import set_url, url_index
from warehouse import queries as q

st.title("Runs")

runs = runs_or_stop()
detail = data.query(q.runs_detail)
# The run id (long for real runs) is in the picker and the facts below, not in this table:
# every column of it stays on screen at 1440 px.
overview = detail.select(
    "name",
    "status",
    "started_at",
    "duration_s",
    "samples",
    "errors",
    "pass_rate_percent",
    "cost_usd",
    "judge",
    "embedder",
)
tables.show(
    overview,
    key="runs_table",
    # Numbers get narrow columns so judge and embedder names (long with real models) fit
    # without a sideways scroll at 1440 px.
    formats={"duration_s": "%d", "pass_rate_percent": "%.1f", "cost_usd": "$%.4f"},
    status=st.column_config.TextColumn("Status", width="small"),
    started_at=st.column_config.DatetimeColumn("Started", format="YYYY-MM-DD HH:mm"),
    duration_s=st.column_config.NumberColumn("Duration (s)", format="%d", width="small"),
    samples=st.column_config.NumberColumn("Samples", width="small"),
    errors=st.column_config.NumberColumn("Errors", width="small"),
    pass_rate_percent=st.column_config.NumberColumn("Pass rate %", format="%.1f", width="small"),
    cost_usd=st.column_config.NumberColumn("Cost USD", format="$%.4f", width="small"),
)
download_csv(detail, "runs.csv", key="runs_csv")

st.subheader("One run")
run_ids = list(runs["run_id"])
run_id = st.selectbox(
    "Run",
    run_ids,
    index=url_index("run", run_ids),
    format_func=run_label(runs).get,
    key="runs_detail_run",
)
set_url(run=run_id)
row = detail.filter(detail["run_id"] == run_id).row(0, named=True)
facts = {
    "Run ID": row["run_id"],
    "Status": row["status"],
    "Started": str(row["started_at"]),
    "Finished": str(row["finished_at"] or "—"),
    "Judge": row["judge"],
    "Judge prompt version": row["judge_prompt_version"] or "—",
    "Embedder": row["embedder"],
    "Claim threshold": "—" if row["claim_threshold"] is None else f"{row['claim_threshold']:.3f}",
    "Test set": row["test_set"],
    "Test set hash": row["test_set_hash"] or "—",
    "evalhouse version": row["version"],
    "Git commit": row["git_commit"] or "—",
}
# A data grid draws cell text as plain text (no Markdown): safe for values from data.
st.dataframe(
    {"Field": list(facts), "Value": [str(v) for v in facts.values()]},
    hide_index=True,
    height=(len(facts) + 1) * 35 + 3,  # every field on screen, no inner scroll
    key="runs_facts",
    placeholder=tables.MISSING,
)
st.caption("Config (JSON)")
try:
    st.json(json.loads(row["config"] or "{}"), expanded=1)
except json.JSONDecodeError:
    st.code(row["config"], language=None)

st.subheader("Low-faithfulness analysis")
st.caption(
    "Per iteration: the answers the judge scored faithfulness 3 or below, by category, and "
    "the completeness failures, with examples and what to try."
)
show_low_faithfulness(run_id, data.query(q.run_low_faithfulness, run_id))
