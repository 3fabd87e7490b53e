"""Ground-truth pages from disk: Markdown, HTML and text, cut into chunks with page URLs.

A page's URL, in order: the URL list given with ``--urls`` (``URL PATH`` per line, the
pages of a sitemap already saved to disk), the page's own (HTML ``<link rel=canonical>``
or ``og:url``, Markdown front matter ``url:`` / ``source:``), then ``--base-url`` joined
with the file's path relative to the folder, else ``file:`` + the path. Chunks are the
page's paragraphs merged up to ``CHUNK_CHARS`` characters, never across a heading, so a
chunk keeps its section's title.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlparse

from engine.errors import InputError
from engine.testsets.reading import decode

PAGE_SUFFIXES = (".md", ".markdown", ".html", ".htm", ".txt")
"""Files read as pages; others in a folder are ignored."""
CHUNK_CHARS = 700
"""Paragraphs are merged into chunks of at most about this many characters."""
MAX_PAGE_BYTES = 5_000_000


class PagesError(InputError):
    """Pages that cannot be read (missing path, bad URL list, nothing to read)."""


@dataclass(frozen=True)
class Chunk:
    """A passage of a page: the unit questions are asked about."""

    chunk_id: str
    """``<page id>#<n>``, unique in one generation."""
    page_url: str
    """URL of the page the passage comes from."""
    title: str
    """The page's title, or the section heading above the passage."""
    text: str
    """The passage."""
    domain: str
    """Host of the page URL (empty for ``file:`` pages)."""


@dataclass(frozen=True)
class Page:
    """One page read from disk."""

    page_id: str
    url: str
    title: str
    chunks: tuple[Chunk, ...]


# --------------------------------------------------------------------------- HTML

_SKIP = {"script", "style", "nav", "footer", "header", "noscript", "svg", "form", "aside"}
_BLOCK = {"p", "div", "li", "br", "tr", "section", "article", "main", "table", "ul", "ol"}
_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}


class _HtmlText(HTMLParser):
    """Visible text of an HTML page as Markdown-like lines (headings kept as ``#``)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self.url = ""
        self._skip = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        if tag in _SKIP:
            self._skip += 1
        elif tag == "title":
            self._in_title = True
        elif tag == "link" and "canonical" in values.get("rel", "").split():
            self.url = self.url or values.get("href", "")
        elif tag == "meta" and values.get("property") == "og:url":
            self.url = self.url or values.get("content", "")
        elif tag in _HEADINGS:
            self.parts.append("\n\n" + "#" * int(tag[1]) + " ")
        elif tag in _BLOCK:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP and self._skip:
            self._skip -= 1
        elif tag == "title":
            self._in_title = False
        elif tag in _HEADINGS or tag in _BLOCK:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._skip:
            self.parts.append(re.sub(r"\s+", " ", data))


def html_to_text(html: str) -> tuple[str, str, str]:
    """(text with ``#`` headings, title, canonical URL) of an HTML page."""
    parser = _HtmlText()
    parser.feed(html)
    parser.close()
    return "".join(parser.parts), parser.title.strip(), parser.url.strip()


# --------------------------------------------------------------------------- Markdown

_FRONT = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.DOTALL)
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MD_NOISE = re.compile(r"(\*\*|__|`|^>\s?)", re.MULTILINE)
_MD_ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+(.*?)\s*$", re.MULTILINE)


def _item(match: re.Match[str]) -> str:
    # A list item is a sentence of its own: end it, so items do not run together.
    item = match.group(1)
    return item if item[-1:] in ".!?:;" else item + "."


def markdown_to_text(text: str) -> tuple[str, str, str]:
    """(text with ``#`` headings, title, URL from front matter) of a Markdown page."""
    url = title = ""
    front = _FRONT.match(text)
    if front:
        for line in front.group(1).splitlines():
            key, _, value = line.partition(":")
            key, value = key.strip().lower(), value.strip().strip("\"'")
            if key in ("url", "source", "canonical") and not url:
                url = value
            elif key == "title":
                title = value
        text = text[front.end() :]
    text = _MD_LINK.sub(r"\1", text)
    text = _MD_ITEM.sub(_item, _MD_NOISE.sub("", text))
    return text, title, url


def text_to_text(text: str) -> str:
    """A plain-text page with its title lines (short, unpunctuated, standing alone)
    marked as headings, so they title the chunks below instead of joining them."""
    blocks = re.split(r"\n\s*\n", text)
    out = []
    for block in blocks:
        line = block.strip()
        titled = "\n" not in line and 0 < len(line.split()) <= 8 and line[-1:] not in ".!?:;,"
        out.append(f"# {line}" if titled else block)
    return "\n\n".join(out)


# --------------------------------------------------------------------------- chunks


def _sections(text: str) -> Iterable[tuple[str, list[str]]]:
    """(heading, paragraphs) in page order; text before the first heading has ''.
    A paragraph is a block between blank lines (its wrapped lines joined)."""
    heading, paragraphs = "", []
    for block in re.split(r"\n\s*\n", text):
        lines: list[str] = []
        for line in (ln.strip() for ln in block.splitlines()):
            match = re.fullmatch(r"#{1,6}\s*(.*)", line)
            if match:
                if lines:
                    paragraphs.append(" ".join(lines))
                    lines = []
                if paragraphs:
                    yield heading, paragraphs
                heading, paragraphs = match.group(1).strip(), []
            elif line:
                lines.append(line)
        if lines:
            paragraphs.append(" ".join(lines))
    if paragraphs:
        yield heading, paragraphs


def chunk_text(text: str, title: str, page_id: str, url: str) -> tuple[Chunk, ...]:
    """The page's paragraphs merged into chunks (never across a heading)."""
    domain = urlparse(url).hostname or ""
    chunks: list[Chunk] = []
    for heading, paragraphs in _sections(text):
        current = ""
        for paragraph in (p.strip() for p in paragraphs):
            if len(paragraph.split()) < 3 and not current:
                continue  # a stray label, button text or date line
            if current and len(current) + len(paragraph) > CHUNK_CHARS:
                chunks.append(_chunk(page_id, len(chunks), url, heading or title, current, domain))
                current = ""
            current = f"{current} {paragraph}".strip()
        if current:
            chunks.append(_chunk(page_id, len(chunks), url, heading or title, current, domain))
    return tuple(chunks)


def _chunk(page_id: str, n: int, url: str, title: str, text: str, domain: str) -> Chunk:
    return Chunk(f"{page_id}#{n}", url, title, re.sub(r"\s+", " ", text), domain)


# --------------------------------------------------------------------------- reading


def read_url_list(path: Path) -> dict[Path, str]:
    """``URL PATH`` per line (blank lines and ``#`` comments skipped); PATH relative to the
    list's folder. Raises PagesError naming the line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PagesError(f"{path}: cannot read the URL list ({exc.strerror})") from exc
    out: dict[Path, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split(None, 1)
        if len(fields) != 2 or not urlparse(fields[0]).scheme:
            raise PagesError(f"{path}:{number}: expected 'URL PATH' (a saved page), got {line!r}")
        out[(path.parent / fields[1]).resolve()] = fields[0]
    return out


def _page_files(paths: Sequence[Path]) -> list[tuple[Path, Path]]:
    """(file, folder it was found in) of every page under ``paths``, sorted per folder."""
    found: list[tuple[Path, Path]] = []
    for path in paths:
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.suffix.lower() in PAGE_SUFFIXES)
            found.extend((f, path) for f in files if f.is_file())
        elif path.is_file():
            found.append((path, path.parent))
        else:
            raise PagesError(f"{path}: no such file or folder")
    return found


def _slug(relative: Path) -> str:
    stem = relative.with_suffix("").as_posix()
    return re.sub(r"[^A-Za-z0-9/_-]+", "-", stem).strip("-") or "page"


def read_pages(
    paths: Sequence[Path], *, urls: dict[Path, str] | None = None, base_url: str | None = None
) -> list[Page]:
    """Every page under ``paths`` (folders searched recursively), chunked.

    Raises PagesError when a path is missing or no page has any text.
    """
    urls = urls or {}
    pages: list[Page] = []
    seen: set[str] = set()
    for file, folder in _page_files(paths):
        relative = file.relative_to(folder)
        raw = file.read_bytes()
        if len(raw) > MAX_PAGE_BYTES:
            raise PagesError(f"{file}: {len(raw):,} bytes is more than a page ({MAX_PAGE_BYTES:,})")
        text = decode(str(file), raw)
        suffix = file.suffix.lower()
        if suffix in (".html", ".htm"):
            body, title, own_url = html_to_text(text)
        elif suffix in (".md", ".markdown"):
            body, title, own_url = markdown_to_text(text)
        else:
            body, title, own_url = text_to_text(text), "", ""
        url = urls.get(file.resolve()) or own_url
        if not url and base_url:
            url = base_url.rstrip("/") + "/" + relative.with_suffix("").as_posix()
        url = url or file.resolve().as_uri()
        page_id = _slug(relative)
        while page_id in seen:
            page_id += "-"
        seen.add(page_id)
        title = title or _first_heading(body) or relative.stem.replace("-", " ").title()
        pages.append(Page(page_id, url, title, chunk_text(body, title, page_id, url)))
    if not any(p.chunks for p in pages):
        raise PagesError(
            "no page text found under " + ", ".join(str(p) for p in paths)
            + f" (pages are {', '.join(PAGE_SUFFIXES)} files)"
        )  # fmt: skip
    return pages


def _first_heading(body: str) -> str:
    match = re.search(r"^#{1,6}\s*(.+)$", body, re.MULTILINE)
    return match.group(1).strip() if match else ""
