"""The sidebar launcher: the config file and command line, uploads, progress parsing, a real
detached launch, and the form (estimate before launch, an upload is what runs, bounds from
the model, re-run of failed samples) in AppTest."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from dashboard import launcher
from engine.models import RunConfig, option_bounds
from engine.processes import evalhouse_command
from engine.settings import Paths, resolve_paths
from tests.dashboard.conftest import AppFactory, open_sidebar_forms


def test_a_launch_runs_exactly_the_form_s_config(tmp_path: Path) -> None:
    """The launcher writes the form's RunConfig to a file and the CLI reads back the same
    config (every option, none lost on the way), with --only and --estimate as given."""
    from evalhouse.cli import build_parser
    from evalhouse.run_options import run_config

    paths = resolve_paths(tmp_path)
    config = RunConfig(
        test_set="/t/set.jsonl", name="my run", judge="openai:m", embedder="local",
        target="recorded", iterations=3, concurrency=7, retries=4, max_failed_fraction=0.25,
    )  # fmt: skip
    file = launcher.write_config(config, tmp_path / "launch.json")
    command = launcher.run_arguments(paths, file, ("a", "b"), estimate=True)
    assert command[: len(evalhouse_command())] == evalhouse_command()
    tail = command[len(evalhouse_command()) :]
    assert tail == [
        "run", "--home", str(paths.home), "--config", str(file), "--only", "a,b", "--estimate",
    ]  # fmt: skip
    args = build_parser().parse_args(tail)
    assert run_config(args) == config
    assert (args.only, args.estimate) == ("a,b", True)


def test_save_upload_sanitises_and_keeps_distinct_files(tmp_path: Path) -> None:
    paths = resolve_paths(tmp_path)
    first = launcher.save_upload(paths, "../../etc/my set.jsonl", b"{}\n")
    assert first == paths.test_sets / "my_set.jsonl"
    assert launcher.save_upload(paths, "my set.jsonl", b"{}\n") == first  # same content
    assert launcher.save_upload(paths, "my set.jsonl", b"[]\n").name == "my_set-2.jsonl"
    with pytest.raises(ValueError, match=r"must be \.jsonl"):
        launcher.save_upload(paths, "x.exe", b"")
    assert [p.name for p in launcher.list_test_sets(paths)] == ["my_set-2.jsonl", "my_set.jsonl"]
    # a re-analysis's working file is not a test set anyone chose
    (paths.test_sets / "reanalysis-r1-abc.jsonl").write_text("{}\n")
    assert len(launcher.list_test_sets(paths)) == 2


def test_progress_and_tail(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_text("start\n[##..] 1/4 25.0%\r[###.] 3/4 75.0% 2.0/s ETA 00:01 $0.0000\nwarn\n")
    assert launcher.tail(log).splitlines()[1].startswith("[###.] 3/4")
    assert launcher.parse_progress(launcher.tail(log)) == (3, 4)
    assert launcher.parse_progress("nothing") is None
    assert launcher.tail(tmp_path / "missing.log") == ""


def test_detached_launch_records_exit_code_and_log(tmp_path: Path) -> None:
    paths = resolve_paths(tmp_path)
    spec = RunConfig(test_set=str(tmp_path / "no-such-set.jsonl"), name="bad input")
    started = launcher.launch(paths, spec)
    deadline = time.monotonic() + 30
    while started.exit_code() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert started.status() == "failed (exit 2)"  # the CLI's exit code for bad input
    assert "no-such-set.jsonl" in launcher.tail(started.log_path)
    assert started.run_id() is None and not started.alive()
    (again,) = launcher.list_launches(paths)
    assert again.launch_id == started.launch_id and again.spec == spec


def test_closed_forms_draw_no_widget_until_opened(app: AppFactory, fixture_home: Paths) -> None:
    # A closed form's widgets would cost every page's first visit their code
    at = app(fixture_home)
    labels = [e.label for e in at.sidebar.expander]
    assert labels[:2] == ["Launch run", "Re-run samples"]
    assert not at.sidebar.get("file_uploader") and not at.sidebar.radio
    assert not [s for s in at.sidebar.selectbox if (s.key or "").startswith("launch_")]
    at = open_sidebar_forms(at)
    assert at.sidebar.get("file_uploader") and at.sidebar.radio(key="launch_rerun_mode")
    assert at.sidebar.selectbox(key="launch_test_set").value == "fixture.jsonl"


def test_form_estimates_before_launching(app: AppFactory, fixture_home: Paths) -> None:
    at = open_sidebar_forms(app(fixture_home))
    assert at.sidebar.selectbox(key="launch_test_set").value == "fixture.jsonl"
    assert not [b for b in at.sidebar.button if b.key == "launch_new_launch"]
    at.sidebar.button(key="launch_new_estimate").click().run()
    estimate = at.sidebar.code[0].value
    assert "judge calls:   0" in estimate and "cost:          $0.0000" in estimate
    assert [b for b in at.sidebar.button if b.key == "launch_new_launch"]


def test_rerun_failed_samples_offers_the_error_rows(app: AppFactory, fixture_home: Paths) -> None:
    at = open_sidebar_forms(app(fixture_home))
    at.sidebar.selectbox(key="launch_rerun_run").set_value("r2").run()
    assert "1 samples: beta-q2" in [c.value for c in at.sidebar.caption]
    at.sidebar.radio(key="launch_rerun_mode").set_value("one domain").run()
    at.sidebar.selectbox(key="launch_domain").set_value("gamma.example").run()
    captions = [c.value for c in at.sidebar.caption]
    assert any(c.startswith("6 samples: gamma-q1, gamma-q2") for c in captions)


def test_launch_stores_absolute_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    paths = resolve_paths("home")  # relative, as `--home home` gives it
    started = launcher.launch(paths, RunConfig(test_set="sets/missing.jsonl", name="relative"))
    assert started.spec.test_set == str(tmp_path / "sets" / "missing.jsonl")
    assert started.folder == str(tmp_path / "home" / "launches")
    home_at = started.command.index("--home") + 1
    assert started.command[home_at] == str(tmp_path / "home")
    (again,) = launcher.list_launches(paths)
    assert again.spec.test_set == str(tmp_path / "sets" / "missing.jsonl")
    deadline = time.monotonic() + 30
    while started.exit_code() is None and time.monotonic() < deadline:
        time.sleep(0.1)


CANCEL_CASES = 40
"""Cases of the run the cancel test cancels and resumes."""


def test_cancel_stops_the_run_cleanly_and_leaves_it_resumable(tmp_path: Path) -> None:
    from engine.demo import build_weekly_test_sets
    from ingest import ingest
    from warehouse.queries import Warehouse

    paths = resolve_paths(tmp_path / "home")
    _name, week, _date = build_weekly_test_sets(tmp_path / "sets", weeks=1)[0]
    # 40 of the week's 330 cases: the run is cancelled at its first progress line, long
    # before 40 are scored (were it done, cancel would not say "resumable" and the test
    # fails); the resume then scores the rest with the real model, which took about
    # 2 minutes of this machine for the whole week.
    test_set = tmp_path / "sets" / "forty.jsonl"
    lines = week.read_text(encoding="utf-8").splitlines()[:CANCEL_CASES]
    test_set.write_text("\n".join(lines) + "\n", encoding="utf-8")
    config = RunConfig(test_set=str(test_set), name="to cancel", concurrency=2)
    started = launcher.launch(paths, config)
    deadline = time.monotonic() + 120
    while started.progress() is None and time.monotonic() < deadline:
        assert started.exit_code() is None, launcher.tail(started.log_path)
        time.sleep(0.05)
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
    # Resume (the panel's button): the same run scores only what it lacks, each sample once
    again = launcher.launch(paths, config, resume=run_id)
    deadline = time.monotonic() + 300
    while again.exit_code() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert again.exit_code() == 0, launcher.tail(again.log_path)
    assert again.run_id() == run_id
    ids = (
        Warehouse(paths.warehouse)
        .sql("SELECT sample_id FROM results WHERE run_id = $r", {"r": run_id})
        .frame["sample_id"]
    )
    assert ids.len() == ids.n_unique() == CANCEL_CASES


def test_an_uploaded_test_set_is_the_one_that_runs(
    app: AppFactory, fixture_home: Paths, tmp_path: Path
) -> None:
    """A person opens the form (the Test set box shows the first file), uploads an 8-case
    file, and estimates: the box shows the upload and the estimate reads its 8 cases. The
    box stays free: choosing another file afterwards sticks."""
    shutil.copytree(fixture_home.home, tmp_path / "home")
    at = open_sidebar_forms(app(resolve_paths(tmp_path / "home")))
    assert at.sidebar.selectbox(key="launch_test_set").value == "fixture.jsonl"
    # the name of last week's run, still in the box from the previous launch
    at.sidebar.text_input(key="launch_name").set_value("demo-week-1").run()
    cases = "".join(
        json.dumps({"id": f"up-{i}", "query": f"What is {i}?", "response": f"It is {i}."}) + "\n"
        for i in range(8)
    )
    uploader = next(e for e in at.sidebar.get("file_uploader") if e.key == "launch_upload")
    uploader.upload("zz-eight cases.jsonl", cases.encode(), "application/jsonl").run()
    assert at.sidebar.selectbox(key="launch_test_set").value == "zz-eight_cases.jsonl"
    assert at.sidebar.text_input(key="launch_name").value == "zz-eight_cases"
    at.sidebar.button(key="launch_new_estimate").click().run()
    assert "8 cases" in at.sidebar.code[0].value
    at.sidebar.selectbox(key="launch_test_set").set_value("fixture.jsonl").run()
    at.run()
    assert at.sidebar.selectbox(key="launch_test_set").value == "fixture.jsonl"
    assert at.sidebar.text_input(key="launch_name").value == "fixture"
    # a name typed for the chosen file stays
    at.sidebar.text_input(key="launch_name").set_value("fixture nightly").run()
    at.run()
    assert at.sidebar.text_input(key="launch_name").value == "fixture nightly"


def test_form_bounds_and_defaults_are_the_model_s(app: AppFactory, fixture_home: Paths) -> None:
    at = open_sidebar_forms(app(fixture_home))
    for field in ("iterations", "concurrency"):
        box = at.sidebar.number_input(key=f"launch_{field}")
        low, high = option_bounds(field)
        assert (box.min, box.max) == (low, high)
        assert box.value == RunConfig.model_fields[field].default


def test_a_launch_recorded_by_the_earlier_form_is_still_listed(tmp_path: Path) -> None:
    paths = resolve_paths(tmp_path)
    folder = paths.home / "launches"
    folder.mkdir(parents=True)
    spec = {"test_set": "/t/s.jsonl", "name": "old", "judge": "local", "embedder": "local",
            "target": "recorded", "iterations": 1, "concurrency": 5, "only": ["a"]}  # fmt: skip
    record = {"launch_id": "x", "spec": spec, "command": ["evalhouse"], "pid": 0,
              "started_at": 0.0, "folder": str(folder), "extra": {}}  # fmt: skip
    (folder / "x.json").write_text(json.dumps(record), "utf-8")
    (listed,) = launcher.list_launches(paths)
    assert listed.spec == RunConfig(test_set="/t/s.jsonl", name="old")
    assert listed.only == ("a",)
