"""``--judge-mode batch`` through the real ``evalhouse run``: an OpenAI-wire judge on the
loopback server, which speaks the Batch API (files, batches, result files) over real HTTP."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import engine.judges.http.batch_queue as batch_queue
from engine.lake import read_table
from engine.settings import Paths, resolve_paths
from evalhouse.cli import main
from tests.cli.test_fewer_calls import _demo, _oracle
from tests.loopback_llm import LoopbackLLM

SCORES = ("passed", "overall", "judge_faithfulness", "judge_completeness", "claim_faithfulness")


@pytest.fixture(autouse=True)
def quick_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches sent and polled in tens of milliseconds instead of seconds."""
    monkeypatch.setattr(batch_queue, "BATCH_SETTLE_S", 0.2)
    monkeypatch.setattr(batch_queue, "BATCH_POLL_S", 0.05)


def _run(home: Paths, test_set: Path, capsys: Any, *extra: str) -> tuple[int, str]:
    code = main(
        ["run", "--test-set", str(test_set), "--name", "batch", "--judge", "openai:gpt-4o-mini",
         "--home", str(home.home), "--no-ingest", *extra]
    )  # fmt: skip
    return code, str(capsys.readouterr().out.strip().splitlines()[-1])


def _results(home: Paths, run_id: str) -> dict[str, dict[str, Any]]:
    return {r["sample_id"]: r for r in read_table(home.lake, "results", run_id).to_pylist()}


def _each_prompt_in_one_batch(llm: LoopbackLLM) -> bool:
    ids = [line["custom_id"] for b in llm.batches.batches.values() for line in b.lines]
    return len(ids) == len(set(ids))


def test_batch_mode_scores_as_live_mode_at_half_the_price(
    home: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    other = resolve_paths(tmp_path / "home2")  # its own judge cache: no free answers
    test_set = _demo(tmp_path, 8)
    with LoopbackLLM(responder=_oracle) as llm:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("OPENAI_BASE_URL", llm.url)
        # one at a time: a prompt two samples share is then paid once, as in a batch
        code, live_id = _run(home, test_set, capsys, "--concurrency", "1")
        assert code == 0
        live_calls = llm.count
        code, batch_id = _run(other, test_set, capsys, "--judge-mode", "batch")
        assert code == 0
        chat_in_batch = [r for r in llm.requests[live_calls:] if "chat" in r.path]
    live, batched = _results(home, live_id), _results(other, batch_id)
    assert live.keys() == batched.keys() and len(live) == 8
    for sample_id, row in live.items():
        assert row["error"] is None and batched[sample_id]["error"] is None
        for column in SCORES:
            assert batched[sample_id][column] == row[column], (sample_id, column)
    live_cost = sum(r["cost_usd"] for r in live.values())
    batch_cost = sum(r["cost_usd"] for r in batched.values())
    assert live_cost > 0
    assert chat_in_batch == []  # every prompt went through a batch
    assert batch_cost == pytest.approx(live_cost / 2)
    # rounds: claims extracted with the rubric, claims verified, then the RAG metrics
    # (a round whose prompts trickle in slower than the settle time may take two batches)
    assert llm.batches.created >= 3
    assert _each_prompt_in_one_batch(llm)
    assert llm.batches.lines_answered == live_calls
    assert not (other.progress / batch_id / "judge-batches.json").read_text().count("batch_")


def test_a_stopped_run_resumes_polling_the_same_batch(
    home: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """Ctrl-C while the batch runs: the run is cancelled (130) and the batch id stays in
    the run's state; running the same command again follows that batch, never a second."""
    test_set = _demo(tmp_path, 4)
    with LoopbackLLM(responder=_oracle) as llm:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("OPENAI_BASE_URL", llm.url)
        llm.batches.hold = True

        def interrupt_once_created() -> None:
            deadline = time.monotonic() + 30
            while llm.batches.created == 0 and time.monotonic() < deadline:
                time.sleep(0.02)
            time.sleep(0.3)  # a few status reads while it runs
            os.kill(os.getpid(), signal.SIGINT)

        stopper = threading.Thread(target=interrupt_once_created)
        stopper.start()
        code, _ = _run(home, test_set, capsys, "--judge-mode", "batch", "--option",
                       "cancel_grace_s=0")  # fmt: skip
        stopper.join()
        assert code == 130 and llm.batches.created == 1
        ledgers = list(home.progress.glob("*/judge-batches.json"))
        assert len(ledgers) == 1 and "batch_1" in ledgers[0].read_text()
        llm.batches.hold = False
        code, run_id = _run(home, test_set, capsys, "--judge-mode", "batch")
        assert code == 0
    assert ledgers[0].parent.name == run_id
    rows = _results(home, run_id)
    assert len(rows) == 4 and all(r["error"] is None for r in rows.values())
    # batch_1 was followed again, not paid for twice: no prompt is in two batches
    assert _each_prompt_in_one_batch(llm)
    assert llm.batches.created >= 3
    assert "batch_" not in ledgers[0].read_text()


def test_failed_lines_and_an_expired_batch_fall_back_to_live_calls(
    home: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    test_set = _demo(tmp_path, 4)
    with LoopbackLLM(responder=_oracle) as llm:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("OPENAI_BASE_URL", llm.url)
        llm.batches.fail_line = lambda line: "rubric" in str(line["body"]["messages"][0])
        llm.batches.end = "expired"
        llm.batches.answered = 3  # the window ran out after three lines
        code, run_id = _run(home, test_set, capsys, "--judge-mode", "batch")
        assert code == 0
        live = [r for r in llm.requests if r.path.endswith("/chat/completions")]
    rows = _results(home, run_id)
    assert len(rows) == 4 and all(r["error"] is None for r in rows.values())
    assert llm.batches.lines_answered > 0 and live  # some from batches, the rest live


def test_batch_mode_needs_an_openai_judge(home: Paths, tmp_path: Path, capsys: Any) -> None:
    test_set = _demo(tmp_path, 2)
    code = main(
        ["run", "--test-set", str(test_set), "--name", "x", "--judge", "local",
         "--judge-mode", "batch", "--home", str(home.home), "--no-ingest"]
    )  # fmt: skip
    assert code == 2
    assert "openai: judge" in capsys.readouterr().err


def test_the_estimate_shows_both_prices(home: Paths, tmp_path: Path, capsys: Any) -> None:
    test_set = _demo(tmp_path, 4)
    costs = {}
    for mode in ("live", "batch"):
        code = main(
            ["run", "--test-set", str(test_set), "--name", "e", "--judge", "openai:gpt-4o-mini",
             "--judge-mode", mode, "--home", str(home.home), "--estimate"]
        )  # fmt: skip
        assert code == 0
        out = capsys.readouterr().out
        cost_line = next(line for line in out.splitlines() if line.startswith("cost:"))
        costs[mode] = float(cost_line.split("$")[1])
        if mode == "batch":
            assert "judge mode batch" in out and "live" in out
    assert costs["batch"] == pytest.approx(costs["live"] / 2, abs=1e-4)  # shown to 4 places
