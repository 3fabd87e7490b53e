"""The multipage Streamlit dashboard: ``streamlit run dashboard/streamlit_app.py``."""

NO_WARMUP_FLAG = "--no-warmup"
"""After ``--`` on the streamlit command line: the server does not visit its own pages
(``dashboard.warmup``); each page's first visit runs its queries."""
