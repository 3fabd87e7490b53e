"""The dashboard's entry point: page router and the sidebar shared by every page.

streamlit run dashboard/streamlit_app.py -- --home DIR     (or: evalhouse dashboard)
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboard.access import AccessError, AccessRefused
from dashboard.components.demo_notice import demo_notice
from dashboard.components.errors import show_error, show_failure, show_no_data
from dashboard.components.identity import access, require_sign_in
from dashboard.components.launch_form import launch_sidebar
from dashboard.components.pickers import SHOW_ARCHIVED
from dashboard.data import home_paths, warehouse
from dashboard.page_table import PAGES as PAGE_TABLE
from warehouse.db import WarehouseError, WarehouseMissing

# A shipped PNG, not a ":material/...:" icon: Streamlit fetches those favicons from
# fonts.gstatic.com, and the dashboard must work (and stay quiet) offline.
FAVICON = Path(__file__).resolve().with_name("favicon.png")
st.set_page_config(page_title="evalhouse", page_icon=str(FAVICON), layout="wide")

PAGES = [
    st.Page(
        spec.script,
        title=spec.title,
        icon=spec.icon,
        url_path=spec.url_path or None,
        default=not spec.url_path,
    )
    for spec in PAGE_TABLE
]

page = st.navigation(PAGES)

# One read connection for the whole script run (sidebar and page): a page's queries share
# it instead of opening the warehouse once each. It closes when the run ends. Whatever
# fails, a viewer sees one panel, never a traceback (it could quote a connection string).
try:
    rules = access()
    user = require_sign_in(rules)
    with warehouse().session():
        with st.sidebar:
            st.toggle(
                "Show archived runs", key=SHOW_ARCHIVED, help="Archive runs on the Runs page."
            )
            launch_sidebar(rules, user)

        demo_notice(home_paths())

        try:
            page.run()
        except WarehouseMissing as exc:
            show_no_data(str(exc))
        except WarehouseError as exc:
            show_error(exc)
except WarehouseMissing as exc:
    show_no_data(str(exc))
except WarehouseError as exc:
    show_error(exc)
except AccessRefused as exc:
    st.error(str(exc))
except AccessError as exc:
    show_error(exc)
except Exception as exc:
    show_failure(exc)
