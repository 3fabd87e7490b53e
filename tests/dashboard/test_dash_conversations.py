"""The Conversations page in AppTest: the fixture's conversation (fixture_home.py, run r1),
its scores, transcript and per-turn grading, hostile text kept literal; empty and missing
warehouses."""

from __future__ import annotations

from engine.settings import Paths
from tests.dashboard.conftest import AppFactory, table


def _captions(at: object) -> list[str]:
    return [c.value for c in at.caption]  # type: ignore[attr-defined]


def test_conversation_transcript_and_scores(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home, "conversations")
    assert at.selectbox(key="conversations_run").value == "r1"  # the one run with conversations
    (listed,) = table(at, "knowledge_retention")
    assert (listed["conversation_id"], listed["assistant_turns"]) == ("parcel", 2)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics == {
        "Relevancy": "100%",
        "Knowledge retention": "50%",
        "Completeness": "50%",
        "Role adherence": "100%",
        "Expectations met": "50%",
    }
    # the transcript: one chat message per turn, the text shown as plain text
    assert len(at.get("chat_message")) == 4
    texts = [t.value for t in at.text]
    assert texts == [
        "My parcel **never** came, order #12345",
        "Sorry! Order #12345 left on May 2, see [tracking](https://evil.example).",
        "It is still not here",
        "What is your order number?",
    ]
    captions = _captions(at)
    assert "expectation 0.90 (met) · relevant · in role · generated" in captions
    assert (
        "expectation 0.20 (missed) · relevant · in role · asks again for known information "
        "· generated" in captions
    )
    # data strings through safe_text: Markdown and HTML stay literal
    assert r"Lost parcel \<b\>urgent\</b\>" in [h.value for h in at.subheader]
    assert "Expected: Offer a refund or a reshipment" in captions
    assert "Why: asks again for the order number" in captions
    intents = table(at, "satisfied")
    assert [(i["intent"], i["satisfied"]) for i in intents] == [
        ("find the parcel", False),
        ("learn the status", True),
    ]
    assert len(at.get("vega_lite_chart")) == 1  # expectation score per turn


def test_conversation_from_query_params(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home, "conversations", run="r1", conversation="parcel")
    assert at.selectbox(key="conversations_pick_r1").value == "parcel|1|"


def test_conversations_page_without_conversations(
    app: AppFactory, empty_home: Paths, missing_home: Paths
) -> None:
    at = app(empty_home, "conversations")
    assert "No run has conversations yet" in at.info[0].value
    assert not at.dataframe
    at = app(missing_home, "conversations")
    assert "make demo" in at.info[0].value
