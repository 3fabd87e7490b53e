"""The sidebar launcher: command lines, uploads, progress parsing, a real detached launch,
and the form (estimate before launch, re-run of failed samples) in AppTest."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from dashboard import launcher
from dashboard.launcher import RunSpec
from engine.settings import Paths, resolve_paths
from tests.dashboard.conftest import AppFactory


def test_run_arguments_carry_every_option(tmp_path: Path) -> None:
    paths = resolve_paths(tmp_path)
    spec = RunSpec("/t/set.jsonl", "my run", "openai:m", "local", "recorded", 3, 7, ("a", "b"))
    args = launcher.run_arguments(paths, spec, estimate=True)
    assert args[: len(launcher.evalhouse_command())] == launcher.evalhouse_command()
    tail = args[len(launcher.evalhouse_command()) :]
    assert tail == [
        "run", "--home", str(paths.home), "--test-set", "/t/set.jsonl", "--name", "my run",
        "--judge", "openai:m", "--embedder", "local", "--target", "recorded",
        "--iterations", "3", "--concurrency", "7", "--only", "a,b", "--estimate",
    ]  # fmt: skip


def test_save_upload_sanitises_and_keeps_distinct_files(tmp_path: Path) -> None:
    paths = resolve_paths(tmp_path)
    first = launcher.save_upload(paths, "../../etc/my set.jsonl", b"{}\n")
    assert first == paths.test_sets / "my_set.jsonl"
    assert launcher.save_upload(paths, "my set.jsonl", b"{}\n") == first  # same content
    assert launcher.save_upload(paths, "my set.jsonl", b"[]\n").name == "my_set-2.jsonl"
    with pytest.raises(ValueError, match=r"must be \.jsonl"):
        launcher.save_upload(paths, "x.exe", b"")
    assert [p.name for p in launcher.list_test_sets(paths)] == ["my_set-2.jsonl", "my_set.jsonl"]


def test_progress_and_tail(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_text("start\n[##..] 1/4 25.0%\r[###.] 3/4 75.0% 2.0/s ETA 00:01 $0.0000\nwarn\n")
    assert launcher.tail(log).splitlines()[1].startswith("[###.] 3/4")
    assert launcher.parse_progress(launcher.tail(log)) == (3, 4)
    assert launcher.parse_progress("nothing") is None
    assert launcher.tail(tmp_path / "missing.log") == ""


def test_detached_launch_records_exit_code_and_log(tmp_path: Path) -> None:
    paths = resolve_paths(tmp_path)
    spec = RunSpec(str(tmp_path / "no-such-set.jsonl"), "bad input")
    started = launcher.launch(paths, spec)
    deadline = time.monotonic() + 30
    while started.exit_code() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert started.status() == "failed (exit 2)"  # the CLI's exit code for bad input
    assert "no-such-set.jsonl" in launcher.tail(started.log_path)
    assert started.run_id() is None and not started.alive()
    (again,) = launcher.list_launches(paths)
    assert again.launch_id == started.launch_id and again.spec == spec


def test_form_estimates_before_launching(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home)
    assert at.sidebar.selectbox(key="launch_test_set").value == "fixture.jsonl"
    assert not [b for b in at.sidebar.button if b.key == "launch_new_launch"]
    at.sidebar.button(key="launch_new_estimate").click().run()
    estimate = at.sidebar.code[0].value
    assert "judge calls:   0" in estimate and "cost:          $0.0000" in estimate
    assert [b for b in at.sidebar.button if b.key == "launch_new_launch"]


def test_rerun_failed_samples_offers_the_error_rows(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home)
    at.sidebar.selectbox(key="launch_rerun_run").set_value("r2").run()
    assert "1 samples: beta-q2" in [c.value for c in at.sidebar.caption]
    at.sidebar.radio(key="launch_rerun_mode").set_value("one domain").run()
    at.sidebar.selectbox(key="launch_domain").set_value("gamma.example").run()
    captions = [c.value for c in at.sidebar.caption]
    assert any(c.startswith("6 samples: gamma-q1, gamma-q2") for c in captions)


def test_launch_stores_absolute_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    paths = resolve_paths("home")  # relative, as `--home home` gives it
    started = launcher.launch(paths, RunSpec("sets/missing.jsonl", "relative"))
    assert started.spec.test_set == str(tmp_path / "sets" / "missing.jsonl")
    assert started.folder == str(tmp_path / "home" / "launches")
    home_at = started.command.index("--home") + 1
    assert started.command[home_at] == str(tmp_path / "home")
    (again,) = launcher.list_launches(paths)
    assert again.spec.test_set == str(tmp_path / "sets" / "missing.jsonl")
    deadline = time.monotonic() + 30
    while started.exit_code() is None and time.monotonic() < deadline:
        time.sleep(0.1)


def test_cancel_stops_the_run_cleanly_and_leaves_it_resumable(tmp_path: Path) -> None:
    from engine.demo import build_weekly_test_sets
    from ingest import ingest
    from warehouse.queries import Warehouse

    paths = resolve_paths(tmp_path / "home")
    _name, test_set, _date = build_weekly_test_sets(tmp_path / "sets", weeks=1)[0]
    started = launcher.launch(paths, RunSpec(str(test_set), "to cancel", concurrency=2))
    deadline = time.monotonic() + 120
    while started.progress() is None and time.monotonic() < deadline:
        assert started.exit_code() is None, launcher.tail(started.log_path)
        time.sleep(0.2)
    assert started.status() == "running"
    assert started.cancel(grace_s=60) == "cancelled (resumable)"
    assert started.exit_code() == 130  # the CLI's code for a cancelled run: it ended itself
    assert not started.alive() and not launcher.group_members(started.pid)
    run_id = started.run_id()
    assert run_id is not None
    ingest(paths)
    status = (
        Warehouse(paths.warehouse)
        .sql(
            "SELECT status FROM runs WHERE run_id = $r ORDER BY updated_at DESC LIMIT 1",
            {"r": run_id},
        )
        .frame["status"][0]
    )
    assert status == "cancelled"
