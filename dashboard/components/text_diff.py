"""A word diff of two answers: what the challenger removed and added, as escaped HTML.

Words (and the spaces between them) are the unit: a PM reads "costs $20 → $25", not a
character soup. Every piece of text is escaped; only our own ``<del>``/``<ins>`` tags are
markup.
"""

from __future__ import annotations

import difflib
import html
import re

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


def diff_counts(before: str, after: str) -> tuple[int, int]:
    """Words removed and added from ``before`` to ``after``."""
    a, b = _tokens(before), _tokens(after)
    removed = added = 0
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
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
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(html.escape("".join(a[i1:i2])))
            continue
        if op in ("delete", "replace"):
            out.append(f"<del>{html.escape(''.join(a[i1:i2]))}</del>")
        if op in ("insert", "replace"):
            out.append(f"<ins>{html.escape(''.join(b[j1:j2]))}</ins>")
    return f'{_STYLE}<div class="eh-diff">{"".join(out)}</div>'
