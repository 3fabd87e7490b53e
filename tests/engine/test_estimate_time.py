"""The time an estimate promises, computed by hand: local scoring counts, remote calls overlap
up to the concurrency, and the home's own finished runs replace the assumption."""

from __future__ import annotations

import socket
from datetime import datetime, timedelta
from pathlib import Path

from engine.lake import write_part
from engine.models import RunConfig
from engine.run.estimate import estimate_run
from engine.testsets import load_test_set
from tests.engine.test_runner import config_for, write_cases
from tests.factories import run_record

T0 = datetime(2026, 11, 2, 9, 0)


def test_a_local_run_counts_its_scoring_and_says_local(tmp_path: Path) -> None:
    ts = load_test_set(write_cases(tmp_path / "e.jsonl", 10))
    local = estimate_run(config_for(ts, iterations=3), ts)
    # 30 samples: 14 s to start + 30 x 0.5 s of local scoring = 29 s, no call at all
    assert local.seconds == 29.0
    assert local.one_line() == "local, no API calls · about 0m29s"
    assert "0 calls" not in local.render()


def test_remote_calls_overlap_up_to_the_concurrency(tmp_path: Path) -> None:
    ts = load_test_set(write_cases(tmp_path / "e.jsonl", 10))
    config = config_for(
        ts, iterations=2, judge="openai:gpt-4o-mini", target="openai:gpt-4o-mini", concurrency=5
    )
    remote = estimate_run(config, ts)
    assert (remote.target_calls, remote.judge_calls) == (20, 100)
    # 20 samples: 14 + 20 x 0.5 = 24 s local, and 120 calls x 1.5 s / 5 at once = 36 s
    assert remote.seconds == 60.0
    assert remote.one_line().startswith("120 calls · $") and remote.one_line().endswith(
        "about 1m00s"
    )


def _finished(lake: Path, run_id: str, samples: int, seconds: float, **over: object) -> None:
    host = str(over.pop("host", socket.gethostname()))
    config = RunConfig(test_set="t.jsonl", name="n", **over)  # type: ignore[arg-type]
    record = run_record(
        run_id,
        started_at=T0,
        finished_at=T0 + timedelta(seconds=seconds),
        updated_at=T0 + timedelta(seconds=seconds),
        samples=samples,
        host=host,
        config=config.model_dump_json(),
    )
    write_part(lake, "runs", run_id, 0, [record])


def test_the_home_s_own_runs_set_the_pace(tmp_path: Path) -> None:
    ts = load_test_set(write_cases(tmp_path / "e.jsonl", 10))
    lake = tmp_path / "lake"
    # each took 14 s to start, then scored at its pace
    _finished(lake, "r1", 100, 64.0)  # 100 in 50 s: 2.0 samples/s
    _finished(lake, "r2", 100, 39.0)  # 4.0
    _finished(lake, "r3", 100, 54.0)  # 2.5
    _finished(lake, "r4", 100, 20.0, host="elsewhere")  # another machine: not this one's pace
    _finished(lake, "r5", 100, 20.0, concurrency=50)  # other settings
    measured = estimate_run(config_for(ts, iterations=3), ts, lake=lake)
    # 14 s to start, then 30 samples at the median 2.5 samples/s: 12 s
    assert measured.seconds == 26.0
    assert "3 earlier run(s) here at the same settings: 2.5 samples/s" in measured.render()
    # a re-run of one sample is not promised a hundredth of a run: it starts up too
    one = estimate_run(config_for(ts), ts, lake=lake, only_sample_ids={"s0000"})
    assert one.seconds == 14.4
