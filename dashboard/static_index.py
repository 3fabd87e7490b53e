"""Streamlit's own static files, served with one script added to ``index.html``: a page
opened by its address connects at once.

Streamlit's frontend does not know where the app's root is. Opened at ``/compare``, it
asks ``/compare/_stcore/health`` first, gets a 404, waits its retry delay, and only then
asks ``/_stcore/health``: every page but the Overview paid about 0.11 s (a quarter of an
empty Streamlit page's whole visit here) on each visit by address: a bookmark, a link
shared from the dashboard, a reload. The added script tells the frontend where the root
is, from the page's own address, in the browser: when the address ends with one of the
dashboard's page paths (``dashboard.page_table``), the root is what comes before it,
given as ``window.__streamlit.BACKEND_BASE_URL`` (the frontend's setting for a root it
cannot guess). Any other address (the Overview, or a root behind a proxy's prefix) is
left to Streamlit's own search, as is a page whose host already set that value.

The folder served is a copy of the installed package's ``static`` folder made of
symbolic links but for ``index.html``, one per Streamlit installation and page list, in
the user's cache folder (``$XDG_CACHE_HOME/evalhouse``, else ``~/.cache/evalhouse``; the
temporary folder only without a home folder, as a cleaner may empty it under a server
running for weeks), shared by that user's servers and written once. Where that cannot be
done (no symbolic links, a folder someone else could write to, a Streamlit whose
``index.html`` has no module script), Streamlit's own folder is served unchanged: pages
then connect as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path

from dashboard.page_table import PAGE_PATHS
from engine.files import atomic_write_text

log = logging.getLogger("dashboard")

MODULE_SCRIPT = '<script type="module"'
"""Where the hint goes: before the frontend's bundle, which reads it when it loads."""

BASE_URL_HINT = """<script>(() => {
  const known = window.__streamlit;
  if (known && known.BACKEND_BASE_URL) return;
  const parts = window.location.pathname.replace(/\\/+$/, "").split("/");
  if (!PAGE_PATHS.includes(parts[parts.length - 1])) return;
  parts.pop();
  const root = window.location.origin + parts.join("/") + "/";
  window.__streamlit = Object.assign({}, known, {BACKEND_BASE_URL: root});
})();</script>
"""
"""Runs before the bundle; ``PAGE_PATHS`` is replaced by the pages' addresses as JSON."""


def amended_index(html: str, page_paths: tuple[str, ...] = PAGE_PATHS) -> str | None:
    """``index.html`` with the root hint before its module script; None when it has none."""
    at = html.find(MODULE_SCRIPT)
    if at < 0:
        return None
    # JSON of plain path segments, and "</" written so no segment could close the script.
    paths = json.dumps(list(page_paths)).replace("</", "<\\/")
    return html[:at] + BASE_URL_HINT.replace("PAGE_PATHS", paths) + html[at:]


def cache_root() -> Path:
    """Where the amended folders live: the user's cache folder, or the temporary one."""
    configured = os.environ.get("XDG_CACHE_HOME")
    try:
        base = Path(configured) if configured else Path.home() / ".cache"
    except RuntimeError:  # no home folder
        return Path(tempfile.gettempdir())
    return base / "evalhouse"


def served_folder(streamlit_static: Path, root: Path | None = None) -> Path:
    """The folder to serve in place of ``streamlit_static``: the amended copy, made under
    ``root`` (``cache_root()``) if not there yet; ``streamlit_static`` itself when no copy
    can be made."""
    try:
        html = (streamlit_static / "index.html").read_text(encoding="utf-8")
    except OSError:
        return streamlit_static
    amended = amended_index(html)
    if amended is None:
        log.info("Streamlit's index.html has no module script: pages connect unhinted")
        return streamlit_static
    digest = hashlib.sha256(f"{streamlit_static}\0{amended}".encode()).hexdigest()[:16]
    try:
        base = root or cache_root()
        base.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder = base / f"static-{digest}"
        _build(streamlit_static, folder, amended)
    except OSError as exc:
        log.info("serving Streamlit's own static folder (%s)", type(exc).__name__)
        return streamlit_static
    return folder


def _build(source: Path, folder: Path, index_html: str) -> None:
    """Links to every entry of ``source`` but ``index.html``, written last (through a
    rename, so a server reading a half-built folder at the same moment finds no index and
    the next start finishes it)."""
    folder.mkdir(mode=0o755, exist_ok=True)
    # Serve only a folder of this user's that nobody else may write to (the temporary
    # folder is shared), or another user could put their own script in every page.
    stat = folder.lstat()
    if folder.is_symlink() or not folder.is_dir() or stat.st_uid != os.getuid():
        raise PermissionError(folder)
    if stat.st_mode & 0o022:
        raise PermissionError(folder)
    index = folder / "index.html"
    if index.is_file() and index.read_text(encoding="utf-8") == index_html:
        return
    for entry in source.iterdir():
        if entry.name == "index.html":
            continue
        link = folder / entry.name
        with contextlib.suppress(FileExistsError):
            link.symlink_to(entry, target_is_directory=entry.is_dir())
        if link.resolve() != entry.resolve():
            raise FileExistsError(link)
    atomic_write_text(index, index_html)


def serve_amended_index() -> None:
    """Make Streamlit's server serve the amended folder (before the server starts)."""
    from streamlit import file_util

    folder = str(served_folder(Path(file_util.get_static_dir())))
    file_util.get_static_dir = lambda: folder
