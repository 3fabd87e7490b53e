"""While ``evalhouse demo`` is still scoring its runs, say so on every page and refresh the
page as each run lands (the progress file is written by ``engine.demo_run``)."""

from __future__ import annotations

import streamlit as st

from engine.demo_run import read_progress
from engine.settings import Paths

POLL_S = 3.0
"""How often the notice looks for a newly landed run."""


def demo_message(done: int, total: int) -> str:
    """The notice's text (numbers only from the progress file)."""
    return (
        f"The demo is still being scored: {done} of {total} runs have landed so far. "
        "Each new run appears here on its own as soon as it is ingested."
    )


def demo_notice(paths: Paths) -> None:
    """Draw the notice while a demo builds; nothing otherwise."""
    if read_progress(paths) is None:
        return

    @st.fragment(run_every=POLL_S)
    def notice() -> None:
        progress = read_progress(paths)
        seen = st.session_state.get("demo_landed")
        landed = None if progress is None else progress[0]
        st.session_state["demo_landed"] = landed
        if seen is not None and landed != seen:
            st.rerun()  # a run landed (or the demo finished): redraw the whole page
        if progress is not None:
            st.info(demo_message(*progress), icon=":material/hourglass_top:")

    notice()
