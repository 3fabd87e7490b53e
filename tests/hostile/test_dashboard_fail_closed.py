"""A dashboard that requires sign-in fails closed: its access file removed, moved, broken
or rewritten without sign-in refuses every page with one line naming no path, for the
server's whole life; an identity header given twice signs nobody in."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.access import (
    ACCESS_FILE,
    ACCESS_MISSING,
    ACCESS_UNREADABLE,
    ACCESS_WITHOUT_SIGN_IN,
)
from engine.settings import Paths, resolve_paths
from evalhouse.processes import dashboard_command

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "streamlit_app.py")
HEADER = "X-Forwarded-Email"
SIGNED_IN = f"sign_in:\n  user_header: {HEADER}\n"
SIGN_IN_REQUIRED = "Sign-in required: open the dashboard through the sign-in address your"

Visit = Callable[..., AppTest]


class _Handshake:
    """The request headers a browser's WebSocket handshake brought (repeats kept)."""

    def __init__(self, headers: Iterable[tuple[str, str]]) -> None:
        self.headers = list(headers)
        self.cookies: dict[str, str] = {}
        self.remote_ip = "127.0.0.1"


@pytest.fixture
def home(tmp_path: Path) -> Paths:
    """A home with no warehouse (every page would show 'no data') and an access file that
    asks for sign-in."""
    paths = resolve_paths(tmp_path / "home")
    paths.home.mkdir(parents=True)
    (paths.home / ACCESS_FILE).write_text(SIGNED_IN)
    return paths


@pytest.fixture
def visit(monkeypatch: pytest.MonkeyPatch, home: Paths) -> Visit:
    """``visit(*headers, pinned=False)``: one page view of the dashboard over ``home`` with
    these handshake headers; ``pinned``: the server was started with sign-in required."""
    import streamlit.runtime.context as context

    def make(*headers: tuple[str, str], pinned: bool = False) -> AppTest:
        monkeypatch.setenv("EVALHOUSE_HOME", str(home.home))
        argv = ["streamlit_app.py", "--home", str(home.home)]
        monkeypatch.setattr(sys, "argv", [*argv, "--sign-in-required"] if pinned else argv)
        monkeypatch.setattr(context, "_get_client_context", lambda: _Handshake(headers))
        at = AppTest.from_file(APP, default_timeout=30)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        return at

    return make


def _refused_with(at: AppTest, line: str, home: Paths) -> None:
    shown = [e.value for e in at.error]
    assert shown == [line], shown
    page = " ".join(str(e.value) for e in [*at.markdown, *at.code, *at.caption, *at.info])
    assert str(home.home) not in page + line and ACCESS_FILE not in page + line
    assert not at.sidebar.selectbox and not at.sidebar.button and "Launch run" not in page


def test_a_signed_in_visitor_sees_pages(visit: Visit) -> None:
    at = visit((HEADER, "alice@example.com"))
    assert not at.error
    assert any(c.value.startswith("Signed in as alice") for c in at.sidebar.caption)


@pytest.mark.parametrize("how", ["removed", "moved", "rewritten without sign-in"])
def test_the_access_file_gone_after_sign_in_refuses_every_page(
    visit: Visit, home: Paths, how: str
) -> None:
    assert not visit((HEADER, "alice@example.com")).error  # the server has seen sign-in
    access_file = home.home / ACCESS_FILE
    if how == "removed":
        access_file.unlink()
    elif how == "moved":
        access_file.rename(home.home / "dashboard.yaml.bak")
    else:
        access_file.write_text("launch:\n  judges: [local]\n")
    expected = ACCESS_WITHOUT_SIGN_IN if how.startswith("rewritten") else ACCESS_MISSING
    _refused_with(visit(), expected, home)
    _refused_with(visit((HEADER, "alice@example.com")), expected, home)


def test_a_server_started_with_sign_in_refuses_before_any_visit(visit: Visit, home: Paths) -> None:
    """The CLI pins sign-in on the server's command line: a file removed before anyone
    visited cannot open the door either."""
    command = dashboard_command(home, 8501, "0.0.0.0", sign_in_required=True)
    assert command[-1] == "--sign-in-required"
    (home.home / ACCESS_FILE).unlink()
    _refused_with(visit(pinned=True), ACCESS_MISSING, home)


@pytest.mark.parametrize("broken", ["directory", "unreadable", "bad yaml", "dangling link"])
def test_a_broken_access_file_refuses_every_page_naming_no_path(
    visit: Visit, home: Paths, broken: str
) -> None:
    access_file = home.home / ACCESS_FILE
    access_file.unlink()
    if broken == "directory":
        access_file.mkdir()
    elif broken == "unreadable":
        if os.geteuid() == 0:
            pytest.skip("root reads a file of mode 000")
        access_file.write_text(SIGNED_IN)
        access_file.chmod(0)
    elif broken == "bad yaml":
        access_file.write_text("sign_in: [unclosed\n")
    else:
        access_file.symlink_to(home.home / "gone.yaml")
    _refused_with(visit(), ACCESS_UNREADABLE, home)


def test_an_identity_header_given_twice_signs_nobody_in(visit: Visit) -> None:
    at = visit((HEADER, "mallory@example.com"), (HEADER.lower(), "alice@example.com"))
    assert [e.value[: len(SIGN_IN_REQUIRED)] for e in at.error] == [SIGN_IN_REQUIRED]
    assert not at.sidebar.selectbox and not at.caption
