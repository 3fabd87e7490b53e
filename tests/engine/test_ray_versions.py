"""What a Ray worker checks before it scores (no Ray needed: the task is a plain
function): a worker whose evalhouse is not the driver's refuses the shard, naming both
versions, before it writes anything; and a driver joining a cluster with a token on this
machine turns Ray's token authentication on, or says in one line what is missing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine.models import RunConfig
from engine.run import distributed
from engine.run.distributed import Shard, check_version, code_version, score_shard
from engine.run.identity import RunError
from engine.settings import resolve_paths


def test_a_worker_of_another_version_refuses_the_shard(tmp_path: Path) -> None:
    home = resolve_paths(tmp_path / "home")
    config = RunConfig(test_set=str(tmp_path / "cases.jsonl"), name="n")
    with pytest.raises(RunError) as refused:
        score_shard(
            config.model_dump_json(), str(home.home), "r1", Shard(0, 1, ()), "9.9.9 (records x)"
        )
    text = str(refused.value)
    assert "9.9.9 (records x)" in text and code_version() in text and "every node" in text
    assert not home.lake.exists() or not any(home.lake.rglob("*.parquet"))


def test_the_same_version_passes() -> None:
    check_version(code_version())
    assert "(records " in code_version()


@pytest.mark.parametrize(
    ("address", "mode", "token_file", "expected"),
    [
        ("10.0.0.5:6379", None, True, "token"),  # the Ray 2.60 default cluster
        ("10.0.0.5:6379", None, False, None),  # no token here: Ray decides (and says why)
        ("10.0.0.5:6379", "disabled", True, "disabled"),  # the user's choice stands
        (None, None, True, None),  # a local Ray started for the run: Ray's own default
    ],
)
def test_token_authentication_for_a_cluster(
    address: str | None,
    mode: str | None,
    token_file: bool,
    expected: str | None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("RAY_AUTH_TOKEN", raising=False)
    monkeypatch.delenv("RAY_AUTH_TOKEN_PATH", raising=False)
    monkeypatch.setenv("RAY_AUTH_MODE", mode or "")  # recorded, so the test leaves it as found
    if mode is None:
        monkeypatch.delenv("RAY_AUTH_MODE")
    if token_file:
        (tmp_path / ".ray").mkdir()
        (tmp_path / ".ray" / "auth_token").write_text("secret-token")
    distributed._token_auth(address)
    assert os.environ.get("RAY_AUTH_MODE") == expected


def test_a_refused_token_is_one_line() -> None:
    class AuthenticationError(Exception):
        pass

    error = distributed._start_failed("10.0.0.5:6379", AuthenticationError("Unauthenticated"))
    text = str(error)
    assert "\n" not in text and "RAY_AUTH_MODE=token" in text and "~/.ray/auth_token" in text
