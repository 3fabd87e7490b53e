"""The dashboard launches only what the operator allows, for whom it allows.

The access file (``dashboard.access``), the CLI's refusal to serve beyond loopback without
sign-in, the forms offering lists rather than free text, and a real dashboard behind a
sign-in header in headless chromium: no header, no page; a signed-in user reviews under
their own name and launches only when granted.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from dashboard.access import (
    ACCESS_FILE,
    AccessError,
    default_access,
    is_loopback,
    load_access,
    parse_access,
)
from engine.models import RunConfig
from engine.settings import Paths, resolve_paths
from evalhouse.cli import main
from tests.dashboard.conftest import AppFactory, open_sidebar_forms
from tests.dashboard.fixture_home import build_fixture_home
from tests.dashboard.test_dash_browser import ARGS, ARTIFACTS, CHROMIUM

CONFIG = RunConfig(name="r", test_set="t.jsonl")


def test_by_default_the_local_choices_and_the_hosted_ones_whose_key_is_set() -> None:
    bare = default_access({})
    assert (bare.judges, bare.embedders, bare.targets) == (("local",), ("local",), ("recorded",))
    keyed = default_access({"OPENAI_API_KEY": "sk-x", "ANTHROPIC_API_KEY": ""})
    assert keyed.judges == ("local", "openai:gpt-4o-mini")
    assert "openai:text-embedding-3-small" in keyed.embedders
    assert "openai:gpt-4o-mini" in keyed.targets


def test_what_may_be_launched() -> None:
    rules = default_access({})
    assert rules.refusal(CONFIG) is None
    remote = CONFIG.model_copy(update={"target": "http:https://attacker.example/collect"})
    assert "target 'http:https://attacker.example/collect'" in (rules.refusal(remote) or "")
    paid = CONFIG.model_copy(update={"judge": "openai:gpt-4o"})
    assert "judge 'openai:gpt-4o'" in (rules.refusal(paid) or "")
    grounded = CONFIG.model_copy(update={"verifier": "ollama:bespoke-minicheck"})
    assert "verifier" in (rules.refusal(grounded) or "")
    ray = CONFIG.model_copy(update={"executor": "ray"})
    assert rules.refusal(ray) is not None


def test_the_access_file_narrows_widens_and_grants() -> None:
    rules = parse_access(
        {
            "launch": {"judges": ["local", "ollama:llama3.1"], "targets": ["recorded"]},
            "sign_in": {"user_header": "X-Forwarded-Email"},
            "permissions": {"launch": ["alice@example.com"]},
        },
        "dashboard.yaml",
        {},
    )
    assert rules.judges == ("local", "ollama:llama3.1") and rules.embedders == ("local",)
    assert rules.user_header == "X-Forwarded-Email"
    assert rules.may_launch("alice@example.com") and not rules.may_launch("bob@example.com")
    assert not rules.may_launch(None)
    assert rules.may_review("bob@example.com") and not rules.may_review(None)  # signed-in only
    nobody = parse_access(
        {"sign_in": {"user_header": "X-User"}, "permissions": {"review": []}}, "f", {}
    )
    assert not nobody.may_review("bob") and not nobody.may_launch("bob")
    everyone = parse_access(
        {"sign_in": {"user_header": "X-User"}, "permissions": {"launch": ["*"]}}, "f", {}
    )
    assert everyone.may_launch("anyone")
    unshared = default_access({})
    assert unshared.may_launch("local") and unshared.may_review("local")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"lunch": {}}, "unknown key 'lunch'"),
        ({"launch": {"judge": ["local"]}}, "unknown key 'launch.judge'"),
        ({"launch": {"judges": "local"}}, "launch.judges: expected a list"),
        ({"sign_in": {"user_header": ""}}, "sign_in.user_header must name a header"),
        ({"launch": {"targets": ["http:nowhere"]}}, "is not http:URL"),
        (["launch"], "expected a mapping"),
    ],
)
def test_a_bad_access_file_is_named(data: object, message: str) -> None:
    with pytest.raises(AccessError, match=message):
        parse_access(data, "dashboard.yaml", {})


def test_an_access_file_is_bounded_and_named(tmp_path: Path) -> None:
    (tmp_path / ACCESS_FILE).write_text("launch:\n  judges: [local]\n" + "#" * 70_000)
    with pytest.raises(AccessError, match=rf"{ACCESS_FILE}: larger than"):
        load_access(tmp_path, {})
    (tmp_path / ACCESS_FILE).write_text("launch: [unclosed\n")
    with pytest.raises(AccessError, match="cannot read it"):
        load_access(tmp_path, {})


@pytest.mark.parametrize(
    ("address", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.1.2.3", False),
        ("dashboard.internal", False),
    ],
)
def test_loopback(address: str, loopback: bool) -> None:
    assert is_loopback(address) is loopback


def test_serving_beyond_loopback_without_sign_in_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    assert main(["dashboard", "--home", str(home), "--address", "0.0.0.0"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "--address 0.0.0.0" in err and "sign_in.user_header" in err
    assert main(["demo", "--home", str(home), "--address", "10.0.0.5"]) == 2
    assert not (home / "warehouse.duckdb").exists()  # refused before any demo work


# ----------------------------------------------------------------------------- the pages


@pytest.fixture
def guarded_home(tmp_path: Path, fixture_home: Paths) -> Paths:
    """A copy of the fixture home whose access file asks for sign-in."""
    home = tmp_path / "home"
    shutil.copytree(fixture_home.home, home)
    (home / ACCESS_FILE).write_text("sign_in:\n  user_header: X-Forwarded-Email\n")
    return resolve_paths(home)


def test_the_launch_form_offers_lists_not_free_text(
    app: AppFactory, fixture_home: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    at = open_sidebar_forms(app(fixture_home))
    judge = at.sidebar.selectbox(key="launch_judge")
    assert judge.options == ["local"]
    assert not judge.proto.accept_new_options
    assert at.sidebar.selectbox(key="launch_target").options == ["recorded"]


def test_without_the_sign_in_header_no_page_is_shown(app: AppFactory, guarded_home: Paths) -> None:
    at = app(guarded_home)
    assert [e.value for e in at.error] == [
        "Sign-in required: open the dashboard through the sign-in address your operator gave you."
    ]
    assert not at.dataframe and not at.sidebar.selectbox


# ----------------------------------------------------------------------------- in a browser


@pytest.fixture(scope="module")
def served_guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from tests.dashboard.serve import serve_dashboard

    paths = build_fixture_home(tmp_path_factory.mktemp("guarded") / "home")
    (paths.home / ACCESS_FILE).write_text(
        "sign_in:\n  user_header: X-Forwarded-Email\npermissions:\n  launch: [alice@example.com]\n"
    )
    with serve_dashboard(paths.home, tmp_path_factory.mktemp("guarded-log")) as url:
        yield url


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is not installed")
def test_signed_in_users_act_as_themselves(served_guarded: str) -> None:
    """Through a sign-in proxy per user (as oauth2-proxy sets the header); straight to the
    dashboard without it, and with a header the visitor forged, nothing is shown."""
    from playwright import sync_api

    from tests.dashboard.sign_in_proxy import sign_in_proxy

    url = served_guarded
    header = "X-Forwarded-Email"
    with (
        sync_api.sync_playwright() as pw,
        sign_in_proxy(url, header, "bob@example.com") as as_bob,
        sign_in_proxy(url, header, "alice@example.com") as as_alice,
    ):
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        forged = browser.new_context(extra_http_headers={header: "alice@example.com"})
        page = forged.new_page()
        page.goto(url)
        page.get_by_text("Sign-in required").wait_for(timeout=90_000)

        page = browser.new_page()
        page.goto(f"{as_bob}/sample?run=r2&sample=acme-q1&iteration=1")
        page.get_by_text("Signed in as bob").wait_for(timeout=90_000)
        page.get_by_text("Reviewing as bob").wait_for(timeout=90_000)
        assert page.get_by_label("Your name").count() == 0  # no name anyone could type
        assert page.get_by_text("Launch run").count() == 0  # bob may not launch
        page.screenshot(path=str(ARTIFACTS / "signed-in-reviewer.png"), full_page=True)

        page = browser.new_page()
        page.goto(as_alice)
        page.get_by_text("Signed in as alice").wait_for(timeout=90_000)
        page.get_by_text("Launch run").first.wait_for(timeout=90_000)
        page.screenshot(path=str(ARTIFACTS / "signed-in-launcher.png"), full_page=True)
        browser.close()
