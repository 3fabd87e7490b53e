"""The highlighter: a response with its spans coloured by the ground-truth passage they match.

Response text, passages, URLs and judge evidence are untrusted. Every piece of data that
goes into the HTML passes through ``html.escape`` (text and attribute values alike); the
only markup is the one built here. Nothing is ever rendered as Markdown.
"""

from __future__ import annotations

import html
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import SupportsFloat, SupportsInt
from urllib.parse import urlsplit

PALETTE = (
    "#cce5ff",
    "#d4edda",
    "#fff3cd",
    "#e2d9f3",
    "#d1ecf1",
    "#fde2cf",
    "#e6f4c9",
    "#f8d7e3",
)
"""Background colours of matched passages, in order of first appearance."""

UNSUPPORTED_STYLE = "background:#eeeeee;border-bottom:2px dashed #cf222e"
CONTRADICTED_STYLE = "text-decoration:underline wavy #cf222e;text-decoration-thickness:2px"
ATTRIBUTION_STYLE = "outline:2px solid #8250df;outline-offset:1px;border-radius:3px"


def esc(value: object) -> str:
    """HTML-escape any value (quotes too, so it is safe inside attributes)."""
    return html.escape("" if value is None else str(value), quote=True)


@dataclass
class _Mark:
    start: int
    end: int
    kind: str  # match | unsupported | contradicted | attribution
    tip: str
    style: str
    weight: float = 0.0


@dataclass
class Highlighted:
    """The rendered response and the colour given to each matched passage."""

    html: str
    chunk_colors: dict[str, str] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)


def _similarity(row: Mapping[str, object]) -> float | None:
    value = row.get("similarity")
    return float(value) if isinstance(value, SupportsFloat) else None


def _clamp(value: object, size: int) -> int | None:
    if value is None or not isinstance(value, SupportsInt):
        return None
    return max(0, min(size, int(value)))


def render_response(
    response: str,
    highlights: Iterable[Mapping[str, object]] = (),
    verdicts: Iterable[Mapping[str, object]] = (),
    attributions: Iterable[Mapping[str, object]] = (),
) -> Highlighted:
    """HTML of ``response`` with matched, unsupported, contradicted and attribution spans.

    ``highlights`` rows: response_start, response_end, chunk_id, page_url, matched_text,
    similarity (chunk_id None = unsupported). ``verdicts`` rows: verdict, claim_text,
    evidence, response_start, response_end. ``attributions`` rows: type, matched_text,
    response_start, response_end. Hovering a span shows its details (``title``).
    """
    size = len(response)
    marks: list[_Mark] = []
    colors: dict[str, str] = {}
    counts = {"matched": 0, "unsupported": 0, "contradicted": 0, "attribution": 0}
    for row in highlights:
        start, end = _clamp(row.get("response_start"), size), _clamp(row.get("response_end"), size)
        if start is None or end is None or end <= start:
            continue
        similarity = _similarity(row)
        sim_text = "" if similarity is None else f"{similarity:.2f}"
        chunk = row.get("chunk_id")
        if chunk is None:
            counts["unsupported"] += 1
            tip = f"Unsupported: matches no ground-truth passage (best similarity {sim_text})"
            marks.append(_Mark(start, end, "unsupported", tip, UNSUPPORTED_STYLE))
        else:
            counts["matched"] += 1
            color = colors.setdefault(str(chunk), PALETTE[len(colors) % len(PALETTE)])
            tip = (
                f"Matches passage {chunk} (similarity {sim_text})\n"
                f"Page: {row.get('page_url') or '—'}\n"
                f"Passage: {row.get('matched_text') or ''}"
            )
            marks.append(_Mark(start, end, "match", tip, f"background:{color}", similarity or 0.0))
    for row in verdicts:
        if row.get("verdict") != "CONTRADICTED":
            continue
        start, end = _clamp(row.get("response_start"), size), _clamp(row.get("response_end"), size)
        if start is None or end is None or end <= start:
            continue
        counts["contradicted"] += 1
        tip = f"Contradicted: {row.get('claim_text') or ''}\nEvidence: {row.get('evidence') or ''}"
        marks.append(_Mark(start, end, "contradicted", tip, CONTRADICTED_STYLE))
    for row in attributions:
        start, end = _clamp(row.get("response_start"), size), _clamp(row.get("response_end"), size)
        if start is None or end is None or end <= start:
            continue
        counts["attribution"] += 1
        tip = f"Attribution ({row.get('type')}): {row.get('matched_text') or ''}"
        marks.append(_Mark(start, end, "attribution", tip, ATTRIBUTION_STYLE))

    return Highlighted(_markup(response, marks), colors, counts)


def legend_html() -> str:
    """A one-line key to the marks of the highlighter."""
    return (
        '<div style="font-size:0.85rem;margin:0.25rem 0 0.5rem 0">'
        f'<span style="background:{PALETTE[0]}">matched passage</span> · '
        f'<span style="{UNSUPPORTED_STYLE}">unsupported</span> · '
        f'<span style="{CONTRADICTED_STYLE}">contradicted</span> · '
        f'<span style="{ATTRIBUTION_STYLE}">attribution</span> · hover a span for details'
        "</div>"
    )


def page_link_html(url: str) -> str:
    """A ground-truth page URL as a link when it is an absolute http(s) URL with a host;
    anything else (``javascript:``, relative, no scheme) as plain escaped text."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return esc(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return esc(url)
    return (
        f'<a href="{esc(url.strip())}" target="_blank" rel="noopener noreferrer nofollow">'
        f"{esc(url)}</a>"
    )


def render_pages(passages: Sequence[Mapping[str, object]], chunk_colors: Mapping[str, str]) -> str:
    """Ground-truth passages grouped by page; the matched ones in their highlight colour.

    ``passages`` rows: chunk_id, page_url, text, matched (bool), similarity (optional).
    """
    by_page: dict[str, list[Mapping[str, object]]] = {}
    for row in passages:
        by_page.setdefault(str(row.get("page_url") or "(no page URL)"), []).append(row)
    parts: list[str] = []
    for page, rows in by_page.items():
        parts.append(
            '<div style="margin-bottom:0.75rem">'
            f'<div style="font-weight:600;word-break:break-all">{page_link_html(page)}</div>'
        )
        for row in rows:
            chunk = str(row.get("chunk_id") or "")
            color = chunk_colors.get(chunk)
            style = f"background:{color}" if color else "color:#57606a"
            sim = _similarity(row)
            sim_text = "" if sim is None else f" · similarity {sim:.2f}"
            status = "matched" if color else "not matched"
            parts.append(
                f'<div style="{esc(style)};padding:0.3rem 0.5rem;margin:0.25rem 0;'
                'border-radius:4px;white-space:pre-wrap">'
                f'<span style="font-size:0.75rem;color:#57606a">{esc(chunk)} · {status}'
                f"{esc(sim_text)}</span><br>{esc(row.get('text'))}</div>"
            )
        parts.append("</div>")
    return "".join(parts) or "<div>No ground-truth passages recorded.</div>"


def _markup(response: str, marks: list[_Mark]) -> str:
    """``response`` escaped, cut where marks start and end, each piece in a span that names
    the marks covering it (the best-matching passage gives the colour)."""
    size = len(response)
    cuts = sorted({0, size, *(m.start for m in marks), *(m.end for m in marks)})
    pieces: list[str] = []
    for a, b in itertools.pairwise(cuts):
        text = esc(response[a:b])
        covering = [m for m in marks if m.start <= a and b <= m.end]
        if not covering:
            pieces.append(text)
            continue
        # Overlapping passages: the best-matching one gives the colour; every mark shows.
        best_match = max(
            (m for m in covering if m.kind == "match"), key=lambda m: m.weight, default=None
        )
        styles = [m.style for m in covering if m.kind != "match"]
        if best_match is not None:
            styles.insert(0, best_match.style)
        kinds = " ".join(sorted({f"eh-{m.kind}" for m in covering}))
        tip = "\n\n".join(m.tip for m in covering)
        pieces.append(
            f'<span class="{kinds}" style="{esc(";".join(styles))}" title="{esc(tip)}">'
            f"{text}</span>"
        )
    body = "".join(pieces)
    return (
        '<div class="eh-response" style="white-space:pre-wrap;line-height:1.8;'
        'font-size:1rem;padding:0.75rem;border:1px solid #d0d7de;border-radius:6px">'
        f"{body}</div>"
    )
