"""Typed run options: every option has a home in RunConfig, typos and bad values are refused
in one line naming the flag, and configs stored in the old ``extra`` layout still resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.lake import read_table, write_part
from engine.models import RunConfig
from engine.run.identity import new_run_id
from engine.settings import Paths
from engine.testsets import load_test_set
from evalhouse.cli import main
from tests.factories import result_record, run_record


def _test_set(tmp_path: Path, n: int = 3) -> Path:
    path = tmp_path / "cases.jsonl"
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(n):
            case = {"id": f"s{i}", "query": f"Question {i}?", "response": f"Answer {i}.",
                    "expected_answer": {"text": f"Answer {i}."}}  # fmt: skip
            handle.write(json.dumps(case) + "\n")
    return path


def _run(home: Paths, test_set: Path, *args: str) -> list[str]:
    return ["run", "--home", str(home.home), "--test-set", str(test_set), "--name", "opt",
            "--no-ingest", *args]  # fmt: skip


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--option", "target_timout_s=5"], "--option target_timout_s: unknown option; known "),
        (["--option", "target_timeout_s=-1"], "--option target_timeout_s -1: Input should be"),
        (["--option", "http_headers=[1]"], "--option http_headers: Input should be a valid dict"),
        (["--option", "name=x"], "--option name: unknown option"),
        (["--iterations", "0"], "--iterations 0: Input should be greater than or equal to 1"),
        (["--concurrency", "1000000"], "--concurrency 1000000: Input should be less than or"),
        (["--max-failed", "2"], "--max-failed 2.0: Input should be less than or equal to 1"),
        (["--option", "cancel_grace_s=soon"], "--option cancel_grace_s 'soon': Input should be"),
    ],
)
def test_bad_options_are_one_line_naming_the_flag(
    home: Paths,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    expected: str,
) -> None:
    code = main(_run(home, _test_set(tmp_path), *args))
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"error: {expected}"), err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (home.lake / "runs").exists()  # nothing written


def test_unknown_option_names_the_known_ones(
    home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_run(home, _test_set(tmp_path), "--option", "http_header={}")) == 2
    err = capsys.readouterr().err
    assert "http_headers" in err and "target_timeout_s" in err and "cancel_grace_s" in err


def test_options_land_in_typed_fields_from_flags_and_config_files(
    home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(
        "iterations: 2\ntarget_options: {timeout_s: 7}\nextra: {http_answer_path: $.a}\n",
        encoding="utf-8",
    )
    code = main(_run(home, _test_set(tmp_path), "--config", str(config),
                     "--option", "target_backoff_s=0.25", "--option", "http.contexts_path=$.c",
                     "--option", 'prices={"m": [1, 2]}'))  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    run_id = out.strip().splitlines()[-1]
    stored = RunConfig.model_validate_json(
        read_table(home.lake, "runs", run_id, 0).to_pylist()[-1]["config"]
    )
    assert stored.iterations == 2
    assert (stored.target_options.timeout_s, stored.target_options.backoff_s) == (7.0, 0.25)
    assert (stored.http.answer_path, stored.http.contexts_path) == ("$.a", "$.c")
    assert stored.prices == {"m": (1.0, 2.0)}
    assert "extra" not in json.loads(stored.model_dump_json())


def test_a_run_stored_with_the_old_extra_layout_resumes(
    home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _test_set(tmp_path)
    test_set = load_test_set(path)
    run_id = new_run_id()
    # What a run started before the options were typed stored: options in "extra",
    # plus a key nothing ever read.
    old_config = {
        "name": "opt", "test_set": str(path), "iterations": 1, "judge": "local",
        "embedder": "local", "target": "recorded", "concurrency": 5, "retries": 2,
        "max_failed_fraction": 0.0,
        "extra": {"target_timeout_s": 60.0, "cancel_grace_s": 30.0, "typo_nobody_read": 1},
    }  # fmt: skip
    write_part(home.lake, "runs", run_id, 0, [run_record(
        run_id, name="opt", status="running", finished_at=None,
        test_set_hash=test_set.sha256, config=json.dumps(old_config),
    )])  # fmt: skip
    write_part(home.lake, "results", run_id, 1, [result_record(run_id, "s0", query="q")])
    code = main(_run(home, path))
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.strip().splitlines()[-1] == run_id
    assert "1 samples already in the lake, 2 to go" in err
    ids = sorted(r["sample_id"] for r in read_table(home.lake, "results", run_id).to_pylist())
    assert ids == ["s0", "s1", "s2"]


def test_estimate_honours_only_and_takes_time_from_earlier_runs_here(
    home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _test_set(tmp_path, n=4)
    assert main(_run(home, path, "--estimate", "--only", "s1,s2")) == 0
    out = capsys.readouterr().out
    assert "note: 2 of 4 cases, 1 iteration(s)" in out
    assert "time assumed (no earlier run here" in out
    assert main(_run(home, path)) == 0  # a real run on this machine, local judge
    capsys.readouterr()
    assert main(_run(home, path, "--estimate", "--only", "s1")) == 0
    out = capsys.readouterr().out
    assert "note: 1 of 4 cases" in out
    assert "time from 1 earlier run(s) here at the same settings" in out
