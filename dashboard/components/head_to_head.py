"""The Compare page's head-to-head section: the latest comparison of the two sides shown, and
a button that launches ``evalhouse compare-runs BASELINE CHALLENGER`` as a detached process
(the dashboard never writes the warehouse: the CLI writes the lake, then ingests), with its
progress and result."""

from __future__ import annotations

from typing import Any

import streamlit as st

from dashboard import data, formats, launcher
from dashboard.components.identity import access, signed_in_user
from dashboard.components.safe import safe_text
from dashboard.launcher import CompareSpec
from warehouse import queries as q

H2H_OPEN = "h2h_open"
"""Whether the "New head-to-head judgment" expander is open (its session state key)."""


def _side(run_id: str, candidate: str | None) -> str:
    return f"{run_id}:{candidate}" if candidate else run_id


def _latest(spec: CompareSpec) -> dict[str, object] | None:
    """The newest comparison of exactly these two sides (A = baseline), or None."""
    run_a, _, cand_a = spec.run_a.partition(":")
    run_b, _, cand_b = spec.run_b.partition(":")
    found = data.query(q.comparisons, run_a, run_b)
    for row in found.iter_rows(named=True):
        if (row["run_a"], row["candidate_a"], row["run_b"], row["candidate_b"]) == (
            run_a,
            cand_a,
            run_b,
            cand_b,
        ):
            return row
    return None


def _summary(row: dict[str, Any]) -> None:
    # Text, not st.metric: the page's three metrics are improved / regressed / unchanged.
    rates = {k: float(row[k] or 0) for k in ("a_win_low", "a_win_high", "b_win_low", "b_win_high")}
    st.markdown(
        f"**Baseline wins {row['wins_a']} · ties {row['ties']} · challenger wins "
        f"{row['wins_b']}** (ties from orders that disagreed: {row['inconsistent']}; "
        f"pairs the judge failed on: {row['errors']})"
    )
    st.caption(
        safe_text(
            f"Latest comparison {row['comparison_id']} by {formats.judge_name(row['judge'])} at "
            f"{row['compared_at']:%Y-%m-%d %H:%M}. Win rate 95% intervals: baseline "
            f"{rates['a_win_low']:.0%}–{rates['a_win_high']:.0%}, challenger "
            f"{rates['b_win_low']:.0%}–{rates['b_win_high']:.0%}."
        )
        # Text, not a page link: the page's links are its sample links.
        + " Per domain, and ratings across runs: the Leaderboard page."
    )


def _launch_button(spec: CompareSpec) -> None:
    paths = data.home_paths()
    if spec.judge.strip() != "local":
        estimates: dict[CompareSpec, tuple[bool, str]] = st.session_state.setdefault(
            "h2h_estimates", {}
        )
        if st.button("Estimate", key="h2h_estimate", icon=":material/calculate:"):
            with st.spinner("Estimating…"):
                estimates[spec] = launcher.estimate(paths, spec)
        if spec not in estimates:
            st.caption("Estimate the judge calls and cost before judging.")
            return
        ok, text = estimates[spec]
        if not ok:
            st.error("The estimate failed")
            st.code(text or "(no output)", language=None, wrap_lines=True)
            return
        st.code(text, language=None)
    else:
        st.caption("The local rule compares the stored scores: no API calls, no cost.")
    if st.button(
        "Judge head to head", key="h2h_launch", type="primary", icon=":material/play_arrow:"
    ):
        started = launcher.launch(paths, spec)
        st.session_state["h2h_last"] = started.launch_id
        st.toast(f"Judging {safe_text(spec.name)}")


@st.fragment(run_every=2.0)
def _progress(spec: CompareSpec) -> None:
    """The latest launches of this comparison: status, progress, log, result."""
    launches = [
        item
        for item in launcher.list_launches(data.home_paths(), limit=20, comparisons=True)
        if item.spec == spec
    ][:3]
    finished: set[str] = st.session_state.setdefault("h2h_finished", set())
    for item in launches:
        status = item.status()
        result = item.run_id()
        title = f"{safe_text(item.spec.judge)} — {status}" + (f" — {result}" if result else "")
        with st.expander(title, expanded=item.launch_id == st.session_state.get("h2h_last")):
            progress = item.progress()
            if progress is not None and status == "running":
                done, total = progress
                st.progress(min(1.0, done / total), text=f"{done}/{total} pairs judged")
            log = launcher.tail(item.log_path, 1500).strip()
            st.code("\n".join(log.splitlines()[-12:]) or "(no output yet)", language=None)
        if status != "running" and item.launch_id not in finished:
            finished.add(item.launch_id)
            if item.launch_id == st.session_state.get("h2h_last"):
                st.rerun(scope="app")  # the comparison was ingested: show its summary


def head_to_head(
    baseline: str, challenger: str, baseline_candidate: str | None, candidate: str | None
) -> None:
    """Latest head-to-head result of baseline (A) vs challenger (B), and the launch button
    (behind an expander)."""
    st.subheader("Head to head")
    st.caption(
        "An LLM judge (or the local rule) says which answer to each case is better, asked in "
        "both orders; pairs whose orders disagree count as ties."
    )
    rules = access()
    sides = CompareSpec(_side(baseline, baseline_candidate), _side(challenger, candidate))
    latest = _latest(sides)
    if not rules.may_launch(signed_in_user(rules)):
        if latest is not None:
            _summary(latest)
        st.caption("Judging head to head is for users the operator lets launch runs.")
        return
    if latest is None:
        st.info("These two have not been judged head to head yet.")
    else:
        _summary(latest)
    # The judge, its estimate, the button and the launches' progress are built only while
    # the expander is open (opening it runs the page again): closed, they cost no visit
    # its drawing, and the progress stops asking the server every two seconds.
    with st.expander(
        "New head-to-head judgment",
        icon=":material/play_arrow:",
        key=H2H_OPEN,
        on_change="rerun",
    ) as launch:
        if not launch.open:
            return
        c1, c2 = st.columns(2)
        judge = c1.selectbox("Judge", rules.judges, key="h2h_judge")  # the allowed list only
        concurrency = c2.number_input("Judge calls at once", 1, 256, 8, key="h2h_concurrency")
        spec = CompareSpec(sides.run_a, sides.run_b, str(judge), int(concurrency))
        _launch_button(spec)
        _progress(spec)
