"""Conversations: multi-turn test sets. Pick a run and a conversation; read its transcript
with each assistant turn's grading, and the conversation-level scores.

Opened by query parameters too (``?run=...&conversation=...``), like the Sample page.
"""

from __future__ import annotations

import json

import polars as pl
import streamlit as st

from dashboard import charts, data, formats
from dashboard.components import tables
from dashboard.components.pickers import pick_run
from dashboard.components.safe import safe_text
from warehouse import queries as q
from warehouse.queries import SampleRef

st.title("Conversations")

runs = data.query(q.conversation_runs)
if runs.is_empty():
    st.info(
        "No run has conversations yet. Run a multi-turn test set (the CSV columns "
        "conversation_id, turn, role, content, expected_output, or JSONL with a turns list): "
        "evalhouse run --test-set conversations.csv --name NAME"
    )
    st.stop()

params = st.query_params
run_id = pick_run(runs, "conversations_run")

listing = data.query(q.run_conversations, run_id)
st.subheader("Conversations of the run")
st.caption(
    "Conversation-level scores, 0-1 (DeepEval's conversational metrics); "
    f"judge {safe_text(', '.join(sorted({formats.judge_name(j) for j in listing['judge']})))}."
)
# Columns that say nothing here are left out so the table fits the page.
dropped = ["scenario", "expectation_mean", "judge"]
dropped += [c for c in ("iteration", "candidate") if listing[c].n_unique() == 1]
shown = listing.drop(dropped)
zero_to_one = {
    c: st.column_config.NumberColumn(tables.human_label(c), format=formats.score_printf(0, 1))
    for c, dtype in shown.schema.items()
    if dtype.is_float()
}
tables.grid(shown, column_config=tables.column_config(shown, **zero_to_one))

keys = [f"{c}|{i}|{cand}" for c, i, cand in listing.select(
    "conversation_id", "iteration", "candidate").iter_rows()]  # fmt: skip
wanted = params.get("conversation")
first = next((k for k in keys if k.split("|")[0] == wanted), keys[0])
pick = st.selectbox(
    "Conversation",
    keys,
    index=keys.index(first),
    format_func=lambda k: " · ".join(p for p in k.split("|") if p),
    key=f"conversations_pick_{run_id}",
)
conversation_id, iteration, candidate = pick.split("|")
ref = SampleRef(run_id, conversation_id, int(iteration), candidate)
summary = data.query(q.conversation_summary, ref)
turns = data.query(q.conversation_turns, ref)
if summary.is_empty():
    st.warning(f"No scores for conversation {safe_text(repr(conversation_id))}.")
    st.stop()
row = summary.row(0, named=True)

st.subheader(safe_text(row["scenario"] or conversation_id))
if row["chatbot_role"]:
    st.caption(f"Chatbot role: {safe_text(row['chatbot_role'])}")
st.caption(
    f"{row['turns']} turns, {row['assistant_turns']} assistant turns graded with a window of "
    f"{row['window_size']} turns; judge {safe_text(formats.judge_name(row['judge']))}"
)


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


metrics = [
    ("Relevancy", row["relevancy"]),
    ("Knowledge retention", row["knowledge_retention"]),
    ("Completeness", row["completeness"]),
    ("Role adherence", row["role_adherence"]),
    ("Expectations met", row["expectation_pass_rate"]),
]
for column, (label, value) in zip(st.columns(len(metrics)), metrics, strict=True):
    column.metric(label, _share(value))

graded = turns.filter(pl.col("expectation_score").is_not_null())
if graded.height:
    st.subheader("Expectation score per assistant turn")
    st.altair_chart(charts.turn_scores_chart(graded), width="stretch")


def _turn_line(turn: dict[str, object]) -> str:
    """The grading of one assistant turn as one line of plain words (no emoji)."""
    parts: list[str] = []
    score = turn["expectation_score"]
    if isinstance(score, float):
        verdict = "met" if turn["expectation_passed"] else "missed"
        parts.append(f"expectation {score:.2f} ({verdict})")
    parts.append("relevant" if turn["relevant"] else "not relevant")
    if turn["in_role"] is not None:
        parts.append("in role" if turn["in_role"] else "out of role")
    if turn["attrition"]:
        parts.append("asks again for known information")
    if turn["generated"]:
        parts.append("generated")
    return " · ".join(parts)


st.subheader("Transcript")
for turn in turns.to_dicts():
    with st.chat_message("user" if turn["role"] == "user" else "assistant"):
        st.caption(f"Turn {turn['turn']} · {safe_text(turn['role'])}")
        st.text(turn["content"] or "(empty)")
        if turn["role"] == "assistant":
            if turn["expected"]:
                st.caption(f"Expected: {safe_text(turn['expected'])}")
            st.caption(_turn_line(turn))
            if turn["reason"]:
                st.caption(f"Why: {safe_text(turn['reason'])}")

st.subheader("User intents")
intents = json.loads(row["intents"] or "[]")
if intents:
    tables.grid(
        pl.DataFrame(
            {
                "intent": [str(i.get("intent", "")) for i in intents],
                "satisfied": [bool(i.get("satisfied")) for i in intents],
            }
        )
    )
else:
    st.caption("The judge found no user intent.")
st.caption(f"Why: {safe_text(row['reason'])}")
