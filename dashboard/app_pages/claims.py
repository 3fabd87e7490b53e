"""Claims: expected claims found, contradicted and missing per domain and query; the
most-missed ones."""

from __future__ import annotations

import streamlit as st

from dashboard import data
from dashboard.components import tables
from dashboard.components.downloads import download_csv
from dashboard.components.links import sample_picker
from dashboard.components.pickers import SHOW_ARCHIVED, pick_run, runs_or_stop
from dashboard.components.url_state import changed, set_url, url_index, url_int
from warehouse import queries as q
from warehouse.queries import PAGE_SIZE

st.title("Claims")

runs = runs_or_stop()
run_id = pick_run(runs, "claims_run")
if changed("claims_run", run_id):
    set_url(domain=None, page=None)
set_url(run=run_id)

per_domain = data.query(q.claims_by_domain, run_id)
if per_domain.is_empty():
    st.info("This run has no claim records (its test set has no expected claims).")
else:
    st.subheader("Per domain")
    st.caption(
        "Claims of each query's first iteration: found, contradicted (stated wrongly) and "
        "missing (not stated) are counted apart; the per-query rows below add up to these."
    )
    tables.show_html(per_domain, name="claims_domains")
    download_csv(per_domain, f"claims-{run_id}-domains.csv", key="claims_domain_csv")

    st.subheader("Per query")
    c1, c2 = st.columns([3, 1])
    domains = ["", *per_domain["domain"]]
    domain = c1.selectbox(
        "Domain",
        domains,
        index=url_index("domain", domains),
        format_func=lambda d: d or "All domains",
        key="claims_domain",
    )
    page_no = c2.number_input("Page", min_value=1, value=url_int("page"), step=1, key="claims_page")
    set_url(domain=domain, page=int(page_no))
    per_query = data.query(
        q.claims_by_query, run_id, domain=domain or None, offset=(int(page_no) - 1) * PAGE_SIZE
    )
    total = int(per_query["total_rows"][0]) if per_query.height else 0
    st.caption(f"{total} queries, most missing claims first; page {page_no}")
    # The counts before the long text, so a narrow screen keeps them in view.
    counts = ["domain", "sample_id", "claims", "found", "contradicted", "missing"]
    shown = per_query.drop("total_rows")
    shown = shown.select(*counts, *(c for c in shown.columns if c not in counts))
    tables.show_html(shown, name="claims_queries")
    download_csv(shown, f"claims-{run_id}-queries.csv", key="claims_query_csv")
    sample_picker(shown, key="claims_open_query", run_id=run_id)

st.subheader("Most-missed claims across the last 10 runs")
missed_domain = st.selectbox(
    "Domain",
    ["", *sorted(set(data.query(q.run_filters, run_id)["domain"]))],
    format_func=lambda d: d or "All domains",
    key="claims_missed_domain",
)
# Archived runs count only when the sidebar shows them (as on every page).
missed = data.query(
    q.most_missed_claims,
    domain=missed_domain or None,
    include_archived=bool(st.session_state.get(SHOW_ARCHIVED)),
)
if missed.is_empty():
    st.info("No claim was missed.")
else:
    tables.show_html(missed, name="claims_missed")
    download_csv(missed, "most-missed-claims.csv", key="claims_missed_csv")
    sample_picker(
        missed,
        key="claims_open_missed",
        run_col="last_run_id",
        sample_col="last_sample_id",
        iteration_col="last_iteration",
    )
