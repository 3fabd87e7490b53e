"""Who is looking, and what the operator lets them do (``dashboard.access``), per page run.

The access file is read on every script run (it is a few lines): an operator's change
takes effect at the next click, without a restart. It fails closed: a server started with
sign-in (``--sign-in-required`` after ``--``, or any access file with sign-in it has read)
keeps requiring it while it runs, so a removed, moved or rewritten file refuses every page
instead of serving the whole dashboard as the local user. The signed-in user is the header
the operator's sign-in proxy sets, given exactly once; without sign-in, the dashboard
serves loopback only and its one user is ``local``.
"""

from __future__ import annotations

import logging
import sys

import streamlit as st

from dashboard.access import LOCAL_USER, Access, AccessRefused, served_access
from dashboard.components.safe import safe_text
from dashboard.data import home_paths
from engine.secrets import mask_text

SIGN_IN_REQUIRED_FLAG = "--sign-in-required"
"""After ``--`` on the streamlit command line: this server requires sign-in for its life."""

_signed_in_homes: set[str] = set()
"""Homes whose access file asked for sign-in at some point in this server's life: the
latch that keeps sign-in required after the file is gone (module state lives as long as
the server process)."""

log = logging.getLogger("dashboard")


def access() -> Access:
    """The operator's access file of the dashboard's home (or the defaults); raises
    AccessRefused, naming no path, where the dashboard must refuse every page."""
    home = home_paths().home
    key = str(home)
    required = SIGN_IN_REQUIRED_FLAG in sys.argv[1:] or key in _signed_in_homes
    try:
        rules = served_access(home, sign_in_required=required)
    except AccessRefused as exc:
        cause = exc.__cause__
        log.error("every page refused: %s", mask_text(str(cause or exc)))
        raise
    if rules.user_header is not None:
        _signed_in_homes.add(key)
    return rules


def signed_in_user(rules: Access) -> str | None:
    """The user the sign-in proxy names, ``local`` without sign-in, None when a page is
    asked for without the header sign-in requires."""
    if rules.user_header is None:
        return LOCAL_USER
    # Given twice, the header is not one a sign-in proxy set alone (a proxy that appends
    # rather than replaces would let the visitor's own value win): nobody is signed in.
    values = st.context.headers.get_all(rules.user_header)
    if len(values) != 1:
        return None
    return values[0].strip() or None


def require_sign_in(rules: Access) -> str:
    """The signed-in user; stops the page with one panel when there is none."""
    user = signed_in_user(rules)
    if user is None:
        st.error(
            "Sign-in required: open the dashboard through the sign-in address your "
            "operator gave you."
        )
        st.stop()
    assert user is not None
    if rules.user_header is not None:
        st.sidebar.caption(f"Signed in as {safe_text(user)}")
    return user
