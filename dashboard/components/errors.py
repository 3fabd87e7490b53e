"""The one place pages show problems: warehouse errors, missing data, refusals."""

from __future__ import annotations

import logging

import streamlit as st

from dashboard.components.safe import safe_text
from engine.secrets import mask_text
from warehouse.db import WarehouseError

log = logging.getLogger("dashboard")

masked = mask_text
"""``text`` fit for every viewer (``engine.secrets.mask_text``)."""


HOW_TO_CREATE_DATA = (
    "There is no evaluation data yet. Create some with **`make demo`** (or `evalhouse demo`) "
    "for demo data, or evaluate your own test set with "
    "`evalhouse run --test-set PATH --name NAME` followed by `evalhouse ingest` — "
    "or use **Launch run** in the sidebar."
)


def show_error(exc: WarehouseError | Exception, *, title: str | None = None) -> None:
    """Show an error headline and its message as plain text (never as Markdown/HTML)."""
    headline = title or getattr(exc, "title", None) or "Something went wrong"
    st.error(headline, icon="⚠️")
    # The message may quote user SQL or file names: show it verbatim, secrets masked.
    st.code(masked(str(exc)) or type(exc).__name__, language=None, wrap_lines=True)


def show_failure(exc: Exception) -> None:
    """An unexpected error: logged for the operator (secrets masked), shown to the viewer as
    one panel with its kind and masked message, never as a traceback."""
    log.error("page failed: %s: %s", type(exc).__name__, masked(str(exc)))
    show_error(exc, title=f"Something went wrong ({type(exc).__name__})")


def show_refusal(reason: str) -> None:
    """A request the dashboard will not run (e.g. an over-long query)."""
    st.error("Refused", icon="🚫")
    st.code(reason, language=None, wrap_lines=True)


def show_no_data(detail: str | None = None) -> None:
    """The empty/missing-warehouse message, with how to create data."""
    st.info(HOW_TO_CREATE_DATA, icon="ℹ️")
    if detail:
        st.caption(safe_text(detail))
