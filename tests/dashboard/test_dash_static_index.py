"""The dashboard serves Streamlit's static files with a hint in ``index.html`` saying where
the app's root is, so a page opened by its address connects without a failed first try
(the browser side: ``test_dash_browser.py``, every page opened by address asks the root)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dashboard import static_index
from dashboard.page_table import PAGE_PATHS, PAGES

INDEX = (
    "<!doctype html><html><head><title>Streamlit</title>"
    '<script type="module" crossorigin src="./static/js/index.js"></script>'
    "</head><body><div id='root'></div></body></html>"
)


def _static(tmp_path: Path) -> Path:
    source = tmp_path / "streamlit-static"
    (source / "static" / "js").mkdir(parents=True)
    (source / "static" / "js" / "index.js").write_text("// bundle", encoding="utf-8")
    (source / "favicon.png").write_bytes(b"png")
    (source / "index.html").write_text(INDEX, encoding="utf-8")
    return source


def test_the_hint_runs_before_the_bundle_with_every_page_address() -> None:
    html = static_index.amended_index(INDEX)
    assert html is not None
    hint, bundle = html.index("BACKEND_BASE_URL"), html.index('<script type="module"')
    assert hint < bundle
    assert html.replace(html[html.index("<script>(") : bundle], "") == INDEX
    assert "PAGE_PATHS" not in html  # the placeholder is gone: the list is inlined
    paths = json.loads(html[html.index('["') : html.index('"]') + 2])
    assert paths == list(PAGE_PATHS) == [p.url_path for p in PAGES[1:]]
    assert "compare" in paths and "" not in paths


def test_a_segment_cannot_close_the_script() -> None:
    html = static_index.amended_index(INDEX, ("</script><script>alert(1)//",))
    assert html is not None
    assert html.count("</script>") == INDEX.count("</script>") + 1
    assert "<\\/script>" in html


def test_an_index_without_a_module_script_is_served_unchanged(tmp_path: Path) -> None:
    assert static_index.amended_index("<html><head></head></html>") is None
    source = _static(tmp_path)
    (source / "index.html").write_text("<html><head></head></html>", encoding="utf-8")
    assert static_index.served_folder(source, tmp_path / "tmp") == source


def test_the_served_folder_links_everything_but_the_index(tmp_path: Path) -> None:
    source = _static(tmp_path)
    folder = static_index.served_folder(source, tmp_path / "tmp")
    assert folder != source and folder.parent == tmp_path / "tmp"
    assert folder.name.startswith("static-")
    assert (folder / "static").is_symlink() and (folder / "favicon.png").is_symlink()
    assert (folder / "static" / "js" / "index.js").read_text(encoding="utf-8") == "// bundle"
    index = (folder / "index.html").read_text(encoding="utf-8")
    assert index == static_index.amended_index(INDEX)
    assert not (folder / "index.html").is_symlink()
    assert (source / "index.html").read_text(encoding="utf-8") == INDEX  # untouched
    assert sorted(p.name for p in folder.iterdir()) == ["favicon.png", "index.html", "static"]
    # a second server (or the next start) uses the same folder as it is
    assert static_index.served_folder(source, tmp_path / "tmp") == folder


def test_another_streamlit_gets_a_folder_of_its_own(tmp_path: Path) -> None:
    first = static_index.served_folder(_static(tmp_path / "a"), tmp_path / "tmp")
    other = _static(tmp_path / "b")
    (other / "index.html").write_text(INDEX.replace("index.js", "index2.js"), encoding="utf-8")
    second = static_index.served_folder(other, tmp_path / "tmp")
    assert second != first
    assert "index2.js" in (second / "index.html").read_text(encoding="utf-8")


def test_a_half_built_folder_is_finished(tmp_path: Path) -> None:
    source = _static(tmp_path)
    folder = static_index.served_folder(source, tmp_path / "tmp")
    (folder / "index.html").unlink()
    (folder / "favicon.png").unlink()
    assert static_index.served_folder(source, tmp_path / "tmp") == folder
    assert (folder / "favicon.png").is_symlink() and (folder / "index.html").is_file()


@pytest.mark.parametrize("planted", ["writable", "foreign link"])
def test_a_folder_someone_else_could_write_is_not_served(tmp_path: Path, planted: str) -> None:
    source = _static(tmp_path)
    folder = static_index.served_folder(source, tmp_path / "tmp")
    for entry in folder.iterdir():
        entry.unlink()
    if planted == "writable":
        folder.chmod(0o777)
    else:
        evil = tmp_path / "evil"
        evil.mkdir()
        (folder / "static").symlink_to(evil, target_is_directory=True)
    assert static_index.served_folder(source, tmp_path / "tmp") == source
    if planted == "writable":
        assert os.stat(folder).st_mode & 0o777 == 0o777  # left as found, and not used


def test_the_folders_live_in_the_users_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert static_index.cache_root() == tmp_path / "cache" / "evalhouse"
    folder = static_index.served_folder(_static(tmp_path))
    assert folder.parent == tmp_path / "cache" / "evalhouse"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert static_index.cache_root() == Path.home() / ".cache" / "evalhouse"


def test_the_server_is_pointed_at_the_amended_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from streamlit import file_util

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    source = _static(tmp_path)
    monkeypatch.setattr(file_util, "get_static_dir", lambda: str(source))
    static_index.serve_amended_index()
    served = Path(file_util.get_static_dir())
    assert served.parent == tmp_path / "cache" / "evalhouse"
    assert (served / "index.html").read_text(encoding="utf-8") == static_index.amended_index(INDEX)
