"""Kill -9 and Ctrl-C of a real runner process, then resume: exact records, no repeated calls.

The runner runs in a subprocess (``drive`` below, called with ``python -c``) against a
loopback HTTP server that plays both the target (``/query``) and the judge (``/judge``)
and counts every call per sample. The analyzer is the fake of ``test_runner`` (the point
here is the runner's bookkeeping, not the scores).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from engine.lake import list_parts, read_table
from engine.settings import Paths, resolve_paths
from tests.engine.test_runner import result_ids, run_states, write_cases

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


# ----------------------------------------------------------------------------- the driver


def drive() -> None:
    """Run an evaluation as the CLI would, with the fake analyzer and a judge over HTTP.

    argv[1] is a JSON object: home, test_set, url, concurrency, iterations, flush_every, name.
    """
    import httpx

    from engine import runner
    from engine.judges.base import Judge
    from engine.models import RagWeights, RunConfig, TestCase
    from engine.progress import LineProgress
    from engine.run import loop as run_loop
    from engine.targets import build_target
    from engine.testsets import load_test_set
    from tests.engine.test_runner import FakeOutcome, fake_components

    args = json.loads(sys.argv[1])
    run_loop.FLUSH_EVERY = int(args["flush_every"])
    test_set = load_test_set(Path(args["test_set"]))
    target = build_target(
        f"http:{args['url']}/query",
        extra={"http_body": '{"query": "{{query}}", "id": "{{id}}"}', "target_backoff_s": 0.01},
    )
    components, _, _ = fake_components(target=target)
    client = httpx.AsyncClient()

    async def judge_over_http(
        case: TestCase, response: str, judge: Judge, weights: RagWeights
    ) -> FakeOutcome:
        reply = await client.post(f"{args['url']}/judge", json={"id": case.id}, timeout=10)
        reply.raise_for_status()
        return FakeOutcome(faithfulness=float(reply.json()["score"]))

    components.judge_sample = judge_over_http
    config = RunConfig(
        name=args["name"],
        test_set=args["test_set"],
        iterations=args["iterations"],
        concurrency=args["concurrency"],
    )
    outcome = runner.run_evaluation(
        config,
        resolve_paths(args["home"]),
        test_set=test_set,
        components=components,
        progress=LineProgress(sys.stderr, interval_s=0.5),
    )
    print(json.dumps({"run_id": outcome.run_id, "status": outcome.status}))
    sys.exit(outcome.exit_code)


# ----------------------------------------------------------------------------- loopback server


class Counting:
    """Target and judge endpoint; counts calls per (path, sample id)."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.calls: Counter[tuple[str, str]] = Counter()
        self.lock = threading.Lock()
        owner = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with owner.lock:
                    owner.calls[(self.path, body["id"])] += 1
                time.sleep(owner.delay)
                if self.path == "/query":
                    payload = {"answer": f"The answer to {body['query']}"}
                else:
                    payload = {"score": 5}
                data = json.dumps(payload).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the runner was killed mid-request

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def snapshot(self, path: str) -> Counter[str]:
        with self.lock:
            return Counter({sid: n for (p, sid), n in self.calls.items() if p == path})

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def server() -> Iterator[Counting]:
    s = Counting(delay=0.03)
    yield s
    s.close()


def start(home: Paths, test_set: Path, server: Counting, **over: Any) -> subprocess.Popen[str]:
    args = {
        "home": str(home.home),
        "test_set": str(test_set),
        "url": server.url,
        "concurrency": 4,
        "iterations": 1,
        "flush_every": 10,
        "name": "crash",
    }
    args.update(over)
    code = "from tests.engine.test_runner_crash import drive; drive()"
    return subprocess.Popen(
        [sys.executable, "-c", code, json.dumps(args)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def wait_until(proc: subprocess.Popen[str], cond: Callable[[], bool], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        if proc.poll() is not None:
            raise AssertionError(f"runner ended early: {proc.communicate()}")
        time.sleep(0.005)
    proc.kill()
    raise AssertionError("condition not reached")


def finish(proc: subprocess.Popen[str], timeout: float = 60) -> tuple[int, dict[str, Any], str]:
    out, err = proc.communicate(timeout=timeout)
    last = out.strip().splitlines()[-1] if out.strip() else "{}"
    return proc.returncode, json.loads(last), err


def parts(home: Paths, iteration: int | None = None) -> int:
    return sum(
        1
        for p in list_parts(home.lake, ["results"])
        if iteration is None or p.iteration == iteration
    )


def only_run_id(home: Paths) -> str:
    (run_dir,) = (home.lake / "runs").iterdir()
    return run_dir.name.removeprefix("run_id=")


# ----------------------------------------------------------------------------- tests

N = 60

KILL_POINTS: dict[str, tuple[int, Callable[[Paths, Counting], bool]]] = {
    # name: (iterations, when to kill)
    "before-any-flush": (1, lambda h, s: sum(s.snapshot("/query").values()) >= 3),
    "after-first-flush": (1, lambda h, s: parts(h) >= 1),
    "mid-run": (1, lambda h, s: parts(h) >= 3),
    "second-iteration": (2, lambda h, s: parts(h, 2) >= 1),
}


@pytest.mark.parametrize("point", sorted(KILL_POINTS))
def test_kill_9_then_resume(point: str, home: Paths, tmp_path: Path, server: Counting) -> None:
    iterations, when = KILL_POINTS[point]
    test_set = write_cases(tmp_path / "cases.jsonl", N)
    proc = start(home, test_set, server, iterations=iterations)
    wait_until(proc, lambda: when(home, server))
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    run_id = only_run_id(home)
    assert run_states(home, run_id) == ["running"]  # the dead process could write nothing
    done_before = set(result_ids(home, run_id))
    target_before = server.snapshot("/query")
    judge_before = server.snapshot("/judge")

    code, outcome, err = finish(start(home, test_set, server, iterations=iterations))
    assert code == 0, err
    assert outcome == {"run_id": run_id, "status": "completed"}
    assert "already in the lake" in err or not done_before
    ids = result_ids(home, run_id)
    assert len(ids) == len(set(ids)) == N * iterations  # exactly one row per (iteration, sample)
    claims = read_table(home.lake, "claims", run_id).to_pylist()
    assert len(claims) == len({(c["iteration"], c["sample_id"]) for c in claims}) == N * iterations
    assert run_states(home, run_id) == ["running", "running", "completed"]

    for path, before in (("/query", target_before), ("/judge", judge_before)):
        after = server.snapshot(path) - before
        total = server.snapshot(path)
        # Every sample is called once per iteration, plus once more for each sample that was
        # called but not yet flushed at the kill (in flight or in the unflushed buffer).
        repeats = sum(total.values()) - N * iterations
        assert 0 <= repeats <= 10 + 2 * 4, (path, repeats)  # flush_every + 2 x concurrency
        if iterations == 1:
            unflushed = {sid for sid, k in before.items() if k} - {s for _, s in done_before}
            assert repeats == len(unflushed), (path, repeats, unflushed)
            assert set(after) == set(total) - {s for _, s in done_before}
        for iteration, sample_id in done_before:
            if iteration == iterations:  # flushed in the last iteration: never called again
                assert after[sample_id] == 0, (path, sample_id)
            else:
                assert after[sample_id] <= 1  # only for the later iteration


def test_ctrl_c_cancels_cleanly_and_resumes(home: Paths, tmp_path: Path, server: Counting) -> None:
    test_set = write_cases(tmp_path / "cases.jsonl", N)
    proc = start(home, test_set, server)
    wait_until(proc, lambda: parts(home) >= 1)
    proc.send_signal(signal.SIGINT)
    code, outcome, err = finish(proc, timeout=30)
    assert code == 130, err
    run_id = outcome["run_id"]
    assert outcome["status"] == "cancelled"
    assert "stopping: finishing samples in flight" in err
    assert run_states(home, run_id) == ["running", "cancelled"]
    done = result_ids(home, run_id)
    assert 0 < len(done) < N
    # In-flight samples were finished and flushed: every call made has its result row.
    assert sum(server.snapshot("/query").values()) == len(done)
    assert sum(server.snapshot("/judge").values()) == len(done)
    assert not read_table(home.lake, "iteration_metrics", run_id).num_rows

    code, outcome, err = finish(start(home, test_set, server))
    assert code == 0, err
    assert outcome == {"run_id": run_id, "status": "completed"}
    assert sorted(result_ids(home, run_id)) == [(1, f"s{i:04d}") for i in range(N)]
    # Not one sample was sent twice, to the target or to the judge.
    assert set(server.snapshot("/query").values()) == {1}
    assert set(server.snapshot("/judge").values()) == {1}
    assert run_states(home, run_id) == ["running", "cancelled", "running", "completed"]
    assert read_table(home.lake, "iteration_metrics", run_id).num_rows == 1


def test_sigterm_is_a_cancel_too(home: Paths, tmp_path: Path, server: Counting) -> None:
    test_set = write_cases(tmp_path / "cases.jsonl", N)
    proc = start(home, test_set, server)
    wait_until(proc, lambda: parts(home) >= 1)
    proc.send_signal(signal.SIGTERM)
    code, outcome, _ = finish(proc, timeout=30)
    assert (code, outcome["status"]) == (130, "cancelled")


# ----------------------------------------------------------------------------- the real command

JUDGE_REPLY = {
    "claims": ["The answer states one fact."],
    "verdict": "SUPPORTED",
    # a batched verification (the default) of the one claim above
    "verdicts": [{"claim": 1, "verdict": "SUPPORTED", "evidence": "", "passages": [1]}],
    "evidence": "the passage",
    "faithfulness": {"score": 5, "reasoning": "grounded"},
    "completeness": {"score": 4, "reasoning": "explains why"},
    "score": 5,
    "reasoning": "fine",
    "used": True,
}


def test_kill_9_of_evalhouse_run_with_an_llm_judge(home: Paths, tmp_path: Path) -> None:
    """The real ``evalhouse run`` (real analyzer and local embedder, OpenAI-wire judge on a
    loopback server): killed after its first flush, re-run, nothing judged twice."""
    import re

    from tests.loopback_llm import LoopbackLLM, Reply

    exe = Path(sys.executable).parent / "evalhouse"
    if not exe.exists():
        pytest.skip("evalhouse console script not installed")
    n = 120
    test_set = write_cases(tmp_path / "cases.jsonl", n)
    sample_of = re.compile(r"(?:Question|Answer|Passage) (\d+)\b")

    def per_sample(llm: LoopbackLLM, first: int = 0) -> Counter[int]:
        got: Counter[int] = Counter()
        for request in llm.requests[first:]:
            found = {int(m) for m in sample_of.findall(request.prompt_text)}
            assert len(found) == 1, request.prompt_text[:300]
            got[found.pop()] += 1
        return got

    with LoopbackLLM(delay=0.03, responder=lambda p, b: Reply.json(JUDGE_REPLY)) as llm:
        env = {**os.environ, "OPENAI_BASE_URL": llm.url, "OPENAI_API_KEY": "sk-test"}
        command = [
            str(exe), "run", "--home", str(home.home), "--test-set", str(test_set),
            "--name", "real", "--judge", "openai:gpt-4o-mini", "--concurrency", "4",
            "--no-ingest",
        ]  # fmt: skip
        proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wait_until(proc, lambda: parts(home) >= 1, timeout=120)  # type: ignore[arg-type]
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        run_id = only_run_id(home)
        done_before = {int(sid[1:]) for _, sid in result_ids(home, run_id)}
        assert 0 < len(done_before) < n
        calls_before = llm.count
        # The judge cache would hide repeats: remove it so every call reaches the server.
        import shutil

        shutil.rmtree(home.cache, ignore_errors=True)
        again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
        assert again.returncode == 0, again.stderr
        assert again.stdout.strip().splitlines()[-1] == run_id
        after = per_sample(llm, calls_before)
        assert not set(after) & done_before  # flushed samples were never judged again
        assert set(after) | done_before == set(range(n))
        ids = result_ids(home, run_id)
        assert len(ids) == len(set(ids)) == n
        assert run_states(home, run_id) == ["running", "running", "completed"]
