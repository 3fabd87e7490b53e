"""The word diff of two answers: removals struck, additions marked, everything escaped."""

from __future__ import annotations

import re

from dashboard.components.text_diff import diff_counts, diff_html


def test_a_changed_price_reads_as_one_word_out_one_in() -> None:
    before = "Acme Pro costs $20 per month."
    after = "Acme Pro costs $25 per month, billed yearly."
    body = diff_html(before, after)
    assert "costs $<del>20 </del><ins>25</ins> per month<ins>, billed yearly</ins>." in body
    assert diff_counts(before, after) == (1, 4)  # "20" out; "25", ",", "billed", "yearly" in


def test_markup_in_answers_is_text() -> None:
    body = diff_html("<b>old</b>", "<script>alert(1)</script> new").split("</style>", 1)[1]
    tags = {t.split(">")[0].split()[0] for t in body.split("<")[1:]}
    assert tags <= {"div", "/div", "del", "/del", "ins", "/ins"}
    assert "&lt;<del>b </del><ins>script</ins>&gt;" in body


def test_equal_answers_have_no_marks() -> None:
    body = diff_html("same text", "same text")
    assert "<del>" not in body and "<ins>" not in body
    assert diff_counts("same text", "same text") == (0, 0)


def _plain(body: str, keep: str) -> str:
    """The diff as one side reads it: ``keep`` ("ins" or "del") kept, the other dropped."""
    drop = "del" if keep == "ins" else "ins"
    text = body.split('<div class="eh-diff">', 1)[1].removesuffix("</div>")
    text = re.sub(rf"<{drop}>.*?</{drop}>", "", text)
    return re.sub(r"</?(?:ins|del)>", "", text)


def test_a_rewritten_sentence_keeps_its_spaces() -> None:
    before = "The cat sat on the mat today."
    after = "A dog slept under the old mat today."
    body = diff_html(before, after)
    # a rewritten phrase is one phrase out and one in, never "thecat" or "Catdog"
    assert "<del>The cat sat on </del><ins>A dog slept under</ins> the <ins>old </ins>mat" in body
    # each side, read alone, is its own sentence with its spaces
    assert _plain(body, "ins") == after
    assert _plain(body, "del").replace("  ", " ") == before
    assert diff_counts(before, after) == (4, 5)
