"""Experiments: create one (test set, candidates, graders, models), try a grader on one
sample and a provider's connection before spending, estimate, launch, and watch the results
grid fill in; then open the run on the Leaderboard or Compare."""

from __future__ import annotations

import streamlit as st

from dashboard.components.experiment_form import experiment_form
from dashboard.components.experiment_watch import watch
from dashboard.components.identity import access, require_sign_in

st.title("Experiments")
st.caption(
    "A test set, the project's candidates (prompt files) and graders, a target and a judge: "
    "estimate what it costs, launch it, and watch the scores arrive sample by sample."
)

rules = access()
user = require_sign_in(rules)
experiment_form(rules, user)
st.subheader("6 · Watch")
watch(rules.may_launch(user))
