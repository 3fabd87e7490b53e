"""Compare's test-set check: a warning when the two runs scored different versions of their
test set (or different test sets), and the choice to compare only the cases both runs
scored with the same content."""

from __future__ import annotations

import streamlit as st

from dashboard import data
from dashboard.components.safe import safe_text
from warehouse.testset_queries import run_testset_versions, shared_case_count


def _label(row: dict[str, object] | None) -> str:
    if row is None or row["test_set_version"] is None:
        return "an unversioned test set"
    return f"{row['test_set_name']} v{row['test_set_version']}"


def shared_cases_only(challenger: str, baseline: str, *, key: str = "compare_shared") -> bool:
    """Warn when ``challenger`` and ``baseline`` scored different test-set versions and offer
    to restrict the comparison to their shared cases; True when the user keeps it restricted.

    A case is shared when both runs scored it with the same id and content: a case edited
    between versions would compare two different questions or references."""
    if challenger == baseline:  # two candidates of one run: one test set
        return False
    frame = data.query(run_testset_versions, (challenger, baseline))
    rows = {str(r["run_id"]): r for r in frame.iter_rows(named=True)}
    chal, base = rows.get(challenger), rows.get(baseline)
    keys = [(r or {}).get("test_set_cases_hash") for r in (chal, base)]
    if None in keys:
        return False  # a run from before versions: nothing to tell apart
    if keys[0] == keys[1]:
        st.caption(f"Both runs scored {safe_text(_label(chal))}.")
        return False
    counts = data.query(shared_case_count, challenger, baseline)
    same_set = (
        chal is not None and base is not None and chal["test_set_name"] == base["test_set_name"]
    )
    what = "different versions of the test set" if same_set else "different test sets"
    st.warning(
        f"The two runs scored {what}: baseline {safe_text(_label(base))}, challenger "
        f"{safe_text(_label(chal))}. Cases the same in both: {counts.shared} "
        f"(baseline {counts.baseline_cases}, challenger {counts.run_cases})."
    )
    return st.toggle(
        "Only the cases both runs share",
        value=True,
        key=key,
        help="Leave out the cases that were added, removed or edited between the two "
        "versions, so every difference below comes from the answers.",
    )
