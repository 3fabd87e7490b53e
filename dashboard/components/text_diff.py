"""A word diff of two answers: what the challenger removed and added, as escaped HTML.

Words (and the spaces between them) are the unit: a PM reads "costs $20 → $25", not a
character soup. Spaces never anchor a match (every sentence shares them), so a rewritten
phrase reads as one phrase out and one in rather than word-by-word shards; and a removal
followed by an addition keeps a space between them, so "the" out and "cat" in never read
"thecat". Every piece of text is escaped; only our own ``<del>``/``<ins>`` tags are markup.
"""

from __future__ import annotations

import difflib
import html
import re
from collections.abc import Sequence

_TOKENS = re.compile(r"\s+|\w+|[^\w\s]")
MAX_DIFF_TOKENS = 20_000
"""Longest answers (in words and marks) diffed; longer ones are cut first (the diff is
quadratic in the worst case)."""

_STYLE = (
    "<style>.eh-diff{white-space:pre-wrap;line-height:1.6;font-size:0.95rem}"
    ".eh-diff del{background:#ffebe9;color:#82071e;text-decoration:line-through}"
    ".eh-diff ins{background:#dafbe1;color:#116329;text-decoration:none}</style>"
)


def _tokens(text: str) -> list[str]:
    return _TOKENS.findall(text)[:MAX_DIFF_TOKENS]


def _opcodes(a: list[str], b: list[str]) -> Sequence[tuple[str, int, int, int, int]]:
    """The edit script from ``a`` to ``b``, whitespace never anchoring a match."""
    return difflib.SequenceMatcher(str.isspace, a, b, autojunk=False).get_opcodes()


def diff_counts(before: str, after: str) -> tuple[int, int]:
    """Words removed and added from ``before`` to ``after``."""
    a, b = _tokens(before), _tokens(after)
    removed = added = 0
    for op, i1, i2, j1, j2 in _opcodes(a, b):
        if op in ("delete", "replace"):
            removed += sum(1 for t in a[i1:i2] if not t.isspace())
        if op in ("insert", "replace"):
            added += sum(1 for t in b[j1:j2] if not t.isspace())
    return removed, added


def diff_html(before: str, after: str) -> str:
    """``after`` with what ``before`` had and it lacks struck through, and what it added
    marked; escaped."""
    a, b = _tokens(before), _tokens(after)
    out: list[str] = []
    for op, i1, i2, j1, j2 in _opcodes(a, b):
        if op == "equal":
            out.append(html.escape("".join(a[i1:i2])))
            continue
        removed, added = "".join(a[i1:i2]), "".join(b[j1:j2])
        if op == "replace" and not removed[-1].isspace() and not added[0].isspace():
            # The space goes inside the struck part: the new text still reads as written.
            removed += " "
        if removed:
            out.append(f"<del>{html.escape(removed)}</del>")
        if added:
            out.append(f"<ins>{html.escape(added)}</ins>")
    return f'{_STYLE}<div class="eh-diff">{"".join(out)}</div>'
