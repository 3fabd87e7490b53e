"""Markup masking for embedding: a same-length copy of a text with markup blanked.

Markup is masked for embedding but never removed: the masked copy of a response has the
same length as the original, so every offset found on it is an offset into the original
(``response[start:end] == text``).
"""

from __future__ import annotations

import re

_CONTROL = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff"
    "\ud800-\udfff]"
)
_HTML_BLOCK = re.compile(
    r"</?(?:p|br|div|li|ul|ol|h[1-6]|tr|table|section|article|blockquote|pre|hr)\b[^<>]{0,500}>",
    re.IGNORECASE,
)
_HTML_TAG = re.compile(
    r"<!--[^>]{0,2000}?-->|</?[a-zA-Z][a-zA-Z0-9-]{0,20}(?:\s[^<>]{0,500})?/?>", re.DOTALL
)
_ENTITY = re.compile(r"&(?:[a-zA-Z]{2,8}|#\d{1,7}|#[xX][0-9a-fA-F]{1,6});")
_MD_LINK = re.compile(r"(!?\[)([^\[\]\n]{0,500})(\]\([^()\s]{0,2000}\))")
_MD_EMPHASIS = re.compile(
    r"(?<![\w*~`])(?:\*{1,3}|_{1,3}|~~)(?=[^\s*_~])|(?<=[^\s*_~])(?:\*{1,3}|_{1,3}|~~)(?![\w*~])"
)
_MD_CODE = re.compile(r"`{1,3}")
_MD_LINE_MARK = re.compile(r"^[ \t]{0,3}(?:#{1,6}|>{1,3})(?=[ \t])", re.MULTILINE)
_MD_RULE = re.compile(r"^[ \t]*(?:[-*_=|:][ \t]*){3,}$", re.MULTILINE)
_MD_TABLE_PIPE = re.compile(r"(?m)^[ \t]*\|.*\|[ \t]*$")
_MIXED_SCRIPT = re.compile(
    r"\b(?=\w*[A-Za-z])(?=\w*[\u0370-\u03ff\u0400-\u04ff])\w+\b"
)  # a Latin word with Greek or Cyrillic letters in it: usually homoglyphs


def mask_markup(text: str) -> tuple[str, bool]:
    """A copy of ``text`` of the same length with control characters, HTML tags and
    entities and markdown markers replaced by spaces (block tags by a newline), and
    whether anything was masked (or mixed scripts seen). Only embedding uses the copy."""
    chars = list(text)
    touched = False

    def blank(start: int, end: int, newline: bool = False) -> None:
        nonlocal touched
        touched = True
        for i in range(start, end):
            chars[i] = " "
        if newline and end > start:
            chars[start] = "\n"

    for match in _CONTROL.finditer(text):
        blank(match.start(), match.end())
    for match in _HTML_BLOCK.finditer(text):
        blank(match.start(), match.end(), newline=True)
    for match in _HTML_TAG.finditer(text):
        blank(match.start(), match.end())
    for match in _ENTITY.finditer(text):
        blank(match.start(), match.end())
    for match in _MD_LINK.finditer(text):
        blank(match.start(1), match.end(1))
        blank(match.start(3), match.end(3))
    for match in _MD_TABLE_PIPE.finditer(text):
        for i in range(match.start(), match.end()):
            if text[i] == "|":
                blank(i, i + 1)
    for pattern in (_MD_EMPHASIS, _MD_CODE, _MD_LINE_MARK, _MD_RULE):
        for match in pattern.finditer(text):
            blank(match.start(), match.end())
    if _MIXED_SCRIPT.search(text):
        touched = True
    return "".join(chars), touched


def embedding_text(masked: str) -> str:
    """What is embedded for a masked slice: whitespace collapsed, ends trimmed."""
    return " ".join(masked.split())
