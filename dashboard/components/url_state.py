"""Every selection in the URL, so a link shows the same view: a page reads its widgets'
first values from ``st.query_params`` and writes the chosen values back after drawing
them. Names are short and shared across pages (``run``, ``baseline``, ``domain``,
``metric``, ``sample``, ``page``, ...)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st


def url_index(param: str, options: Sequence[Any], default: int = 0) -> int:
    """The position in ``options`` of the URL's ``param`` (compared as text), else
    ``default``."""
    wanted = st.query_params.get(param)
    if wanted is not None:
        for i, option in enumerate(options):
            if str(option) == wanted:
                return i
    return default


def url_int(param: str, default: int = 1, minimum: int = 1) -> int:
    """The URL's ``param`` as a whole number (at least ``minimum``), else ``default``."""
    try:
        return max(minimum, int(st.query_params.get(param, default)))
    except ValueError:
        return default


def url_list(param: str, options: Sequence[str]) -> list[str]:
    """The URL's comma-separated ``param``, keeping only known ``options``."""
    given = st.query_params.get(param)
    if not given:
        return []
    known = set(options)
    return [v for v in given.split(",") if v in known]


def set_url(**values: object) -> None:
    """Write the chosen values into the URL; an empty value (None, "", empty list, the
    first page) removes its parameter."""
    for param, value in values.items():
        if isinstance(value, list | tuple):
            value = ",".join(str(v) for v in value)
        text = "" if value is None else str(value)
        if param == "page" and text == "1":
            text = ""
        if text:
            if st.query_params.get(param) != text:
                st.query_params[param] = text
        elif param in st.query_params:
            del st.query_params[param]


def changed(scope: str, value: object) -> bool:
    """Whether ``value`` differs from what it was on this page's previous run (a run
    chosen anew makes the URL's run-specific choices stale)."""
    key = f"url_prev_{scope}"
    before = st.session_state.get(key)
    st.session_state[key] = value
    return before is not None and before != value
