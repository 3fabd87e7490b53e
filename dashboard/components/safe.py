"""The one safe-text path: every string that comes from data and is shown through an
element that renders Markdown (subheader, caption, markdown, alerts, toasts, expander and
link labels) goes through ``safe_text`` first.

Streamlit's Markdown renders more than CommonMark: links and images (an image makes the
browser fetch another host), GFM autolinks and strikethrough, KaTeX between ``$``,
``:color[text]`` directives, ``:emoji:`` shortcodes and ``:material/icon:`` names, HTML
entities. CommonMark makes any ASCII punctuation literal when a backslash precedes it, so
each of these is defused by escaping the punctuation it cannot do without. Punctuation that
is harmless where it stands is left alone, so ordinary ids and names (``beta-q2``,
``domain_scores``, ``acme.com``) read the same in the source as on screen. Line breaks and
other control characters become spaces: a string from data is one line of a heading or
caption, never new blocks, so block syntax (headings, lists, quotes) can only come from
its first character.

GFM autolinks (``https://…``, ``www.…``, ``a@b.c``) cannot be escaped: remark finds them
in the text after escapes are resolved. An invisible WORD JOINER (U+2060) inside the
trigger (``https:⁠//``, ``www⁠.``, ``a⁠@b``) keeps the text as it reads and the link out.
"""

from __future__ import annotations

import html
import re

_ALWAYS = re.compile(r"([\\`*\[\]<>&$:~@])")
"""Escapes, links, images, autolinks, HTML, entities, KaTeX, directives, emoji and icon
shortcodes, strikethrough, e-mail autolinks: each needs one of these characters."""

_EDGE_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")
"""An underscore between two letters or digits can never start or end emphasis."""

WORD_JOINER = "\u2060"
"""Invisible; breaks GFM's autolink patterns without changing what the text reads."""

_URL = re.compile(r"(?i)(https?\\:)(//)")
_WWW = re.compile(r"(?i)(?<![\w.])(www)\.")
_AT = re.compile(r"\\@")

_MATERIAL = re.compile(r"(?i):material/")
"""Streamlit rewrites ``:material/`` in the source even when the colon is escaped."""

_BLOCK_START = re.compile(r"^(\s*)([#+\-=]|\d{1,9}[.)])")
"""A heading, list or setext marker at the start of the text."""

_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")


def safe_text(value: object) -> str:
    """``value`` as Markdown source that renders as exactly its text (``None`` -> ``""``)."""
    if value is None:
        return ""
    text = _CONTROL.sub(" ", str(value))
    text = _ALWAYS.sub(r"\\\1", text)
    text = _EDGE_UNDERSCORE.sub(r"\\_", text)
    text = _URL.sub(rf"\1{WORD_JOINER}\2", text)
    text = _WWW.sub(rf"\1{WORD_JOINER}.", text)
    text = _AT.sub(rf"{WORD_JOINER}\\@", text)
    text = _MATERIAL.sub(lambda m: m.group(0)[:-1] + "\\/", text)
    return _BLOCK_START.sub(lambda m: m.group(1) + m.group(2)[:-1] + "\\" + m.group(2)[-1], text)


def safe_markup(value: object) -> str:
    """``value`` as text inside raw HTML or SVG drawn through Markdown: markup escaped, and
    ``$`` and ``:`` as entities, so the page's Markdown never reads two dollars as a formula
    nor ``:material/bolt:`` as an icon (Streamlit rewrites icon codes in the whole source,
    raw HTML included)."""
    text = html.escape("" if value is None else str(value), quote=True)
    return text.replace("$", "&#36;").replace(":", "&#58;")
