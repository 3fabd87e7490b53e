"""Resuming a run: the same command picks up from the lake, a changed config or a finished
run starts afresh, ``--resume`` and its refusals, and a live run is never taken over."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from engine.lake import read_table, write_part
from engine.models import ClaimRecord, RunConfig
from engine.progress import NullProgress
from engine.run import identity as identity_mod
from engine.runner import RunError, new_run_id, run_evaluation
from engine.settings import Paths
from engine.testsets import LoadedTestSet, load_test_set
from tests.engine.test_runner import (
    config_for,
    fake_components,
    result_ids,
    run_states,
    write_cases,
)


def _seed_interrupted_run(home: Paths, ts: LoadedTestSet, config: RunConfig, done: int) -> str:
    """A run a dead process left behind: state running, ``done`` results flushed, and an
    orphan claims part of a flush that died before its results part."""
    from tests.factories import result_record, run_record

    run_id = new_run_id()
    write_part(
        home.lake,
        "runs",
        run_id,
        0,
        [
            run_record(
                run_id,
                name=config.name,
                status="running",
                finished_at=None,
                test_set_hash=ts.sha256,
                config=config.model_dump_json(),
            )
        ],
    )
    write_part(
        home.lake,
        "results",
        run_id,
        1,
        [result_record(run_id, c.id, query=c.query) for c in ts.cases[:done]],
    )
    orphan = ClaimRecord(
        run_id=run_id,
        iteration=1,
        sample_id=ts.cases[done].id,
        claim_id="c1",
        claim_text="x",
        importance="required",
        found=True,
        similarity=0.9,
    )
    write_part(home.lake, "claims", run_id, 1, [orphan])
    return run_id


def test_rerunning_the_same_command_resumes_from_the_lake(home: Paths, tmp_path: Path) -> None:
    ts = load_test_set(write_cases(tmp_path / "r.jsonl", 10))
    config = config_for(ts)
    run_id = _seed_interrupted_run(home, ts, config, done=4)
    components, _, script = fake_components()
    sink = NullProgress()
    out = run_evaluation(config, home, test_set=ts, components=components, progress=sink)
    assert out.run_id == run_id and out.status == "completed"
    assert set(script.calls) == {c.id for c in ts.cases[4:]}  # flushed samples never re-judged
    ids = result_ids(home, run_id)
    assert len(ids) == len(set(ids)) == 10
    claims = read_table(home.lake, "claims", run_id).to_pylist()
    assert Counter(c["sample_id"] for c in claims)["s0004"] == 1  # orphan set aside
    assert any(p.name.startswith(".orphan-part-") for p in home.lake.rglob(".orphan-*"))
    assert run_states(home, run_id) == ["running", "running", "completed"]
    assert any("4 samples already in the lake, 6 to go" in m for m in sink.messages)
    progress = json.loads((home.progress / run_id / "iteration-1" / ".progress.json").read_text())
    assert progress["statistics"]["completedQuestions"] == 10


def test_a_different_config_or_finished_run_starts_afresh(home: Paths, tmp_path: Path) -> None:
    ts = load_test_set(write_cases(tmp_path / "r.jsonl", 3))
    config = config_for(ts)
    old = _seed_interrupted_run(home, ts, config, done=1)
    other = config.model_copy(update={"judge": "openai:gpt-4o-mini"})
    components, _, _ = fake_components()
    out = run_evaluation(other, home, test_set=ts, components=components)
    assert out.run_id != old
    again = run_evaluation(
        config_for(ts, concurrency=3), home, test_set=ts, components=fake_components()[0]
    )
    assert again.run_id == old  # only the pace differs: still the same run
    third = run_evaluation(config, home, test_set=ts, components=fake_components()[0])
    assert third.run_id not in (old, out.run_id)  # old is completed now


def test_explicit_resume_and_its_refusals(home: Paths, tmp_path: Path) -> None:
    ts = load_test_set(write_cases(tmp_path / "r.jsonl", 5))
    config = config_for(ts, name="first")
    run_id = _seed_interrupted_run(home, ts, config, done=2)
    with pytest.raises(RunError, match="no run 'nope'"):
        run_evaluation(
            config, home, test_set=ts, resume_run_id="nope", components=fake_components()[0]
        )
    changed = load_test_set(write_cases(tmp_path / "r2.jsonl", 6))
    with pytest.raises(RunError, match="different test set"):
        run_evaluation(
            config, home, test_set=changed, resume_run_id=run_id, components=fake_components()[0]
        )
    components, _, script = fake_components()
    out = run_evaluation(
        config_for(ts, name="renamed"),
        home,
        test_set=ts,
        resume_run_id=run_id,
        components=components,
    )
    assert out.run_id == run_id and sum(script.calls.values()) == 3
    assert read_table(home.lake, "runs", run_id, 0).to_pylist()[-1]["name"] == "first"


@contextmanager
def _live_run(home: Paths, tmp_path: Path) -> Iterator[tuple[LoadedTestSet, RunConfig, str]]:
    """An interrupted run of 3 cases (1 done) whose lock another process holds."""
    ts = load_test_set(write_cases(tmp_path / "r.jsonl", 3))
    config = config_for(ts)
    run_id = _seed_interrupted_run(home, ts, config, done=1)
    held = identity_mod.RunLock(home.progress / run_id / ".lock")
    assert held.try_acquire()
    try:
        yield ts, config, run_id
    finally:
        held.release()


def test_a_live_run_is_not_taken_over(home: Paths, tmp_path: Path) -> None:
    with (
        _live_run(home, tmp_path) as (ts, config, _),
        pytest.raises(RunError, match="still running in another process"),
    ):
        run_evaluation(config, home, test_set=ts, components=fake_components()[0])


def test_a_live_run_of_the_same_name_is_left_alone_by_a_new_run(
    home: Paths, tmp_path: Path
) -> None:
    """What ``evalhouse run`` asks (``start_new_if_live``): same name while another live
    process holds the run gives a new run id, the live run's records untouched; an explicit
    --resume of the live run is refused."""
    with _live_run(home, tmp_path) as (ts, config, run_id):
        before = read_table(home.lake, "runs", run_id, 0).to_pylist()
        sink = NullProgress()
        out = run_evaluation(
            config, home, test_set=ts, components=fake_components()[0], progress=sink,
            start_new_if_live=True,
        )  # fmt: skip
        assert out.run_id != run_id and out.exit_code == 0 and out.samples == 3
        assert sorted(result_ids(home, out.run_id)) == [(1, "s0000"), (1, "s0001"), (1, "s0002")]
        assert result_ids(home, run_id) == [(1, "s0000")]
        assert read_table(home.lake, "runs", run_id, 0).to_pylist() == before
        assert any("running in another process" in m for m in sink.messages)
        with pytest.raises(RunError, match="is running in another process"):
            run_evaluation(
                config, home, test_set=ts, resume_run_id=run_id, components=fake_components()[0]
            )


def test_a_run_that_finished_after_the_state_read_is_not_resumed(
    home: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes, same name: the second read the first's state while it ran, and took
    the lock after the first completed and let go of it. It must start its own run, not
    "resume" the finished one (found by tests/cli/test_two_runs.py)."""
    from tests.factories import run_record

    ts = load_test_set(write_cases(tmp_path / "r.jsonl", 3))
    config = config_for(ts)
    run_id = _seed_interrupted_run(home, ts, config, done=1)
    stale = identity_mod.latest_run_states(home.lake)  # what the second process read
    assert stale[run_id].status == "running"
    finished = run_record(
        run_id,
        name=config.name,
        status="completed",
        test_set_hash=ts.sha256,
        config=config.model_dump_json(),
        updated_at=stale[run_id].updated_at.replace(year=2100),
    )
    write_part(home.lake, "runs", run_id, 0, [finished])  # the first run then finished
    reads = iter([stale])
    real = identity_mod.latest_run_states
    monkeypatch.setattr(
        identity_mod, "latest_run_states", lambda lake: next(reads, None) or real(lake)
    )
    out = run_evaluation(config, home, test_set=ts, components=fake_components()[0])
    assert out.run_id != run_id and out.samples == 3
    assert result_ids(home, run_id) == [(1, "s0000")]
    assert run_states(home, run_id) == ["running", "completed"]
