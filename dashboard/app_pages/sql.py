"""SQL: read-only queries over the warehouse, with a schema browser and CSV download.

The sandbox is the warehouse's: a read-only connection with external access disabled and
the configuration locked, so file reads, COPY, ATTACH, INSTALL/LOAD, SET and writes are
refused by DuckDB itself; this page adds a length limit, a time limit and a row cap.
"""

from __future__ import annotations

import streamlit as st

from dashboard import data
from dashboard.components import tables
from dashboard.components.downloads import download_csv
from dashboard.components.errors import show_error, show_refusal
from dashboard.components.schema_list import schema_html
from warehouse import queries as q
from warehouse.db import QueryError, WarehouseMissing

st.title("SQL")
st.caption(
    f"Read-only. Queries stop after {data.SQL_TIME_LIMIT_S:.0f} s and return at most "
    f"{data.SQL_ROW_CAP:,} rows. Files, URLs, extensions and settings are off limits."
)

browser, editor = st.columns([1, 2])
with browser:
    # One element for every table and view: a grid each (dozens of them) cost the page
    # most of a second at every visit, in the server and in the browser.
    st.markdown(schema_html(data.query(q.schema_columns)), unsafe_allow_html=True)

with editor:
    with st.form("sql_form"):
        text = st.text_area(
            "Query",
            value="SELECT * FROM run_summary ORDER BY started_at DESC",
            height=180,
            key="sql_text",
        )
        submitted = st.form_submit_button("Run", type="primary")
    if submitted:
        st.session_state["sql_last"] = text
    query = st.session_state.get("sql_last")
    if query:
        if len(query) > data.SQL_MAX_CHARS:
            show_refusal(
                f"The query is {len(query):,} characters long; the limit is "
                f"{data.SQL_MAX_CHARS:,}. Shorten it or use `evalhouse sql`."
            )
        else:
            try:
                result = data.run_sql(query)
            except WarehouseMissing:
                raise
            except QueryError as exc:
                show_error(exc, title="Query refused or failed")
            else:
                note = " (cut at the row cap)" if result.truncated else ""
                st.caption(f"{result.frame.height:,} rows{note} in {result.elapsed_ms:.0f} ms")
                tables.grid(tables.styled(result.frame))
                if result.frame.width * result.frame.height > tables.STYLE_MAX_CELLS:
                    st.caption("A result this large is drawn raw: None marks a NULL.")
                download_csv(result.frame, "query.csv", key="sql_csv")
