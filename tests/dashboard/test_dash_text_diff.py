"""The word diff of two answers: removals struck, additions marked, everything escaped."""

from __future__ import annotations

from dashboard.components.text_diff import diff_counts, diff_html


def test_a_changed_price_reads_as_one_word_out_one_in() -> None:
    before = "Acme Pro costs $20 per month."
    after = "Acme Pro costs $25 per month, billed yearly."
    body = diff_html(before, after)
    assert "costs $<del>20</del><ins>25</ins> per month<ins>, billed yearly</ins>." in body
    assert diff_counts(before, after) == (1, 4)  # "20" out; "25", ",", "billed", "yearly" in


def test_markup_in_answers_is_text() -> None:
    body = diff_html("<b>old</b>", "<script>alert(1)</script> new").split("</style>", 1)[1]
    tags = {t.split(">")[0].split()[0] for t in body.split("<")[1:]}
    assert tags <= {"div", "/div", "del", "/del", "ins", "/ins"}
    assert "&lt;<del>b</del><ins>script</ins>&gt;" in body


def test_equal_answers_have_no_marks() -> None:
    body = diff_html("same text", "same text")
    assert "<del>" not in body and "<ins>" not in body
    assert diff_counts("same text", "same text") == (0, 0)
