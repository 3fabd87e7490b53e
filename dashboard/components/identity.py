"""Who is looking, and what the operator lets them do (``dashboard.access``), per page run.

The access file is read on every script run (it is a few lines): an operator's change
takes effect at the next click, without a restart. The signed-in user is the header the
operator's sign-in proxy sets; without sign-in, the dashboard serves loopback only and its
one user is ``local``.
"""

from __future__ import annotations

import streamlit as st

from dashboard.access import LOCAL_USER, Access, load_access
from dashboard.components.safe import safe_text
from dashboard.data import home_paths


def access() -> Access:
    """The operator's access file of the dashboard's home (or the defaults)."""
    return load_access(home_paths().home)


def signed_in_user(rules: Access) -> str | None:
    """The user the sign-in proxy names, ``local`` without sign-in, None when a page is
    asked for without the header sign-in requires."""
    if rules.user_header is None:
        return LOCAL_USER
    value = st.context.headers.get(rules.user_header)
    return value.strip() or None if value else None


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
