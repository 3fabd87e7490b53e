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


_ON = {"1", "true", "on", "yes"}
_OFF = {"0", "false", "off", "no"}


def url_flag(param: str, default: bool) -> bool:
    """The URL's ``param`` as on (``1``) or off (``0``), else ``default``. Written back with
    ``flag_param``, so a switch left at its default adds nothing to the URL."""
    given = (st.query_params.get(param) or "").strip().lower()
    if given in _ON:
        return True
    if given in _OFF:
        return False
    return default


def flag_param(value: bool, default: bool) -> str | None:
    """What ``set_url`` writes for a switch: nothing at its default, else ``1`` or ``0``."""
    return None if value == default else ("1" if value else "0")


def url_range(param: str, low: float, high: float) -> tuple[float, float]:
    """The URL's ``param`` as two bounds ``LOW,HIGH`` inside ``low..high`` (in order), else
    the whole ``(low, high)``. Written back with ``range_param``."""
    try:
        first, second = (float(v) for v in (st.query_params.get(param) or "").split(","))
    except ValueError:
        return low, high
    if first != first or second != second:  # NaN is no bound
        return low, high
    bounded = sorted(min(high, max(low, v)) for v in (first, second))
    return bounded[0], bounded[1]


def range_param(bounds: tuple[float, float], low: float, high: float) -> str | None:
    """What ``set_url`` writes for a range: nothing when it is the whole ``low..high``."""
    if tuple(bounds) == (low, high):
        return None
    return f"{bounds[0]:g},{bounds[1]:g}"


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
