"""Peer benchmark: evalhouse and promptfoo on the same judge calls.

One loopback OpenAI-compatible server (its own process) answers every chat call after
200 ms. The same 500 cases go through both tools at concurrency 32, each making 3,000
judge calls: evalhouse judges each recorded answer with ``judge_calls=per_prompt`` (extract
claims, verify the one claim, rubric, relevance, correctness, chunk use = 6 calls), and
promptfoo grades the same answer (``echo`` provider) with 6 ``llm-rubric`` assertions.
The calls each tool made are counted on the server, not assumed. Pairs run back to back,
first quiet, then beside a CPU-bound neighbour process this bench starts (and stops).

Printed per run: wall seconds, CPU-seconds of the tool's process tree (``RUSAGE_CHILDREN``
around it), calls and calls/s, and how long the tool took to make its first call and to
exit after its last answer (the time no call is in flight); per pair the ratio evalhouse /
promptfoo of wall time (goal <= 0.7). A batched evalhouse run (the default, fewer calls for
the same verdicts) is printed once for reference.

promptfoo is installed from npm (``npm install promptfoo@PINNED``) into
``~/.cache/evalhouse-bench/promptfoo`` the first time; without node or npm the bench says
so and exits 0.

Run: ``.venv/bin/python -m tests.bench.peer_promptfoo [--cases 500] [--pairs 2]``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from tests.bench.runner import _write_synthetic

PROMPTFOO_VERSION = "0.120.8"
"""The newest promptfoo that runs on node 20 (0.121+ asks for node 22)."""
CACHE = Path.home() / ".cache" / "evalhouse-bench" / "promptfoo"
CONCURRENCY = 32
DELAY_S = 0.2
RUBRICS = (
    "The answer states a price.",
    "The answer names the plan.",
    "The answer is one sentence.",
    "The answer gives the period of the price.",
    "The answer does not refuse.",
    "The answer is in English.",
)
"""promptfoo's six judge calls per case (evalhouse makes six per sample per prompt)."""

# One reply that satisfies every prompt of both tools (each reads its own keys).
REPLY = {
    "claims": ["The answer states one fact."],
    "verdict": "SUPPORTED",
    "evidence": "the context says so",
    "verdicts": [{"claim": 1, "verdict": "SUPPORTED", "evidence": "", "passages": [1]}],
    "faithfulness": {"score": 5, "reasoning": "grounded"},
    "completeness": {"score": 4, "reasoning": "explains why"},
    "score": 1,
    "reasoning": "fine",
    "used": True,
    "pass": True,
    "reason": "fine",
}

SERVER = """
import json, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
delay = float(sys.argv[1])
reply = sys.argv[2]
count = [0]
stamps = []  # when each call arrived (time.time())
lock = threading.Lock()
class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    def log_message(self, *args):
        return
    def _send(self, body):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        with lock:
            since = int(self.path.partition("since=")[2] or 0)
            got = stamps[since:]
            self._send(json.dumps({"count": count[0], "first": got[0] if got else None,
                                   "last": got[-1] if got else None}).encode())
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        with lock:
            count[0] += 1
            stamps.append(time.time())
        time.sleep(delay)
        self._send(json.dumps({
            "id": "x", "object": "chat.completion", "created": 0, "model": body.get("model"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": reply}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        }).encode())
class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024
server = Server(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
sys.stdin.read()
"""

NEIGHBOUR = "while True:\n    pass\n"


def promptfoo_bin() -> Path | None:
    """The promptfoo command, installed into the cache folder on first use; None (with the
    reason printed) when node or npm is missing or the install fails."""
    binary = CACHE / "node_modules" / ".bin" / "promptfoo"
    if _works(binary):
        return binary
    if shutil.which("node") is None or shutil.which("npm") is None:
        print("peer-promptfoo: skipped (node and npm are needed to install promptfoo)")
        return None
    CACHE.mkdir(parents=True, exist_ok=True)
    (CACHE / "package.json").write_text('{"name": "evalhouse-bench-promptfoo", "private": true}')
    # better-sqlite3 has no prebuilt binary offline: npm compiles it (minutes on 2 cores).
    print(f"installing promptfoo@{PROMPTFOO_VERSION} into {CACHE} (once)", flush=True)
    done = subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", f"promptfoo@{PROMPTFOO_VERSION}"],
        cwd=CACHE,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0 or not _works(binary):
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        print(f"peer-promptfoo: skipped (npm install failed: {' / '.join(tail)})")
        return None
    return binary


def _works(binary: Path) -> bool:
    """Whether an installed promptfoo starts (its native sqlite module is built on install,
    which an interrupted install leaves out)."""
    if not binary.exists():
        return False
    done = subprocess.run([str(binary), "--version"], capture_output=True, text=True)
    return done.returncode == 0 and "Could not locate the bindings" not in done.stdout + done.stderr


def promptfoo_config(folder: Path, cases: Path, url: str) -> Path:
    """A promptfoo config grading each recorded answer with the six rubrics."""
    tests = []
    for line in cases.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        tests.append({"vars": {"response": case["response"], "query": case["query"]}})
    judge = {
        "id": "openai:chat:gpt-4o-mini",
        "config": {"apiBaseUrl": f"{url}/v1", "apiKey": "sk-bench", "temperature": 0},
    }
    config = {
        "description": "evalhouse peer bench",
        "prompts": ["{{response}}"],
        "providers": ["echo"],
        "defaultTest": {
            "options": {"provider": judge},
            "assert": [{"type": "llm-rubric", "value": r} for r in RUBRICS],
        },
        "tests": tests,
    }
    path = folder / "promptfooconfig.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def _calls(url: str) -> int:
    return int(httpx.get(url).json()["count"])


def _first_and_last(url: str, since: int) -> tuple[float, float]:
    """When the first and the last call since the ``since``-th arrived (time.time())."""
    got = httpx.get(f"{url}/?since={since}").json()
    return float(got["first"]), float(got["last"])


def timed(
    command: list[str], env: dict[str, str], cwd: Path, url: str, attempts: int = 1
) -> dict[str, float]:
    """Wall, CPU-seconds of the command's process tree, and server calls of one run; a run
    that crashes is run again, up to ``attempts`` runs in all."""
    for attempt in range(1, attempts + 1):
        before_calls = _calls(url)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started, started_at = time.perf_counter(), time.time()
        done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
        wall = time.perf_counter() - started
        ended_at = time.time()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        # promptfoo exits 100 when an assertion fails; 0.120.8 may also crash after its
        # eval completed (its file logger's "write after end"): the calls counted stand.
        if done.returncode in (0, 100) or "Eval complete" in done.stdout:
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            first, last = _first_and_last(url, before_calls)
            return {
                "wall": wall,
                "cpu": cpu,
                "calls": _calls(url) - before_calls,
                # process start to its first call, and its last call's answer to its exit
                "start": first - started_at,
                "finish": ended_at - last - DELAY_S,
            }
        if attempt < attempts:
            # The same logger race can also end a run midway: that run is not timed.
            last = (done.stderr.strip().splitlines() or ["no output"])[0]
            print(f"  {Path(command[0]).name} crashed (exit {done.returncode}: {last}); again")
            continue
        print(done.stdout[-2000:], done.stderr[-2000:], sep="\n")
        raise SystemExit(f"{command[0]} exited {done.returncode}")
    raise AssertionError("unreachable")


def _line(tool: str, m: dict[str, float], cases: int) -> str:
    return (
        f"  {tool:<22} wall {m['wall']:6.1f} s  cpu {m['cpu']:6.1f} s "
        f"({m['cpu'] / cases:.3f} s/sample)  {m['calls']:5.0f} calls  "
        f"{m['calls'] / m['wall']:6.1f} calls/s  (first call after {m['start']:.2f} s, exit "
        f"{m['finish']:.2f} s after the last answer)"
    )


def run_pairs(folder: Path, cases: Path, url: str, binary: Path, pairs: int) -> None:
    """The pairs, quiet then beside a CPU-bound neighbour, and one batched evalhouse run
    in each condition."""
    count = len(cases.read_text(encoding="utf-8").splitlines())
    env = {
        **os.environ,
        "OPENAI_BASE_URL": url,
        "OPENAI_API_KEY": "sk-bench",
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
        "PROMPTFOO_CONFIG_DIR": str(folder / "pf-home"),
    }
    runs = [0]

    def evalhouse(mode: str) -> list[str]:
        runs[0] += 1
        return [
            sys.executable, "-m", "evalhouse.cli", "run", "--test-set", str(cases),
            "--name", f"peer-{runs[0]}", "--judge", "openai:gpt-4o-mini",
            "--concurrency", str(CONCURRENCY), "--home", str(folder / f"eh-{runs[0]}"),
            "--no-ingest", "--option", f"judge_calls={mode}",
        ]  # fmt: skip

    promptfoo = [
        str(binary), "eval", "-c", str(promptfoo_config(folder, cases, url)),
        "-j", str(CONCURRENCY), "--no-cache", "--no-write", "--no-table", "--no-progress-bar",
    ]  # fmt: skip
    for condition in ("quiet", "with a CPU-bound neighbour"):
        neighbour = None
        if condition != "quiet":
            neighbour = subprocess.Popen([sys.executable, "-c", NEIGHBOUR])
        try:
            ratios = []
            for pair in range(pairs):
                order = ("evalhouse", "promptfoo") if pair % 2 == 0 else ("promptfoo", "evalhouse")
                got = {}
                for tool in order:
                    if tool == "evalhouse":
                        got[tool] = timed(evalhouse("per_prompt"), env, folder, url)
                    else:
                        got[tool] = timed(promptfoo, env, folder, url, attempts=3)
                ratios.append(got["evalhouse"]["wall"] / got["promptfoo"]["wall"])
                print(f"{condition}, pair {pair + 1}:")
                for tool in order:
                    print(_line(tool, got[tool], count))
                # No tool making these calls at this concurrency beats the ideal: against
                # this promptfoo run, the ideal's ratio is the lowest one reachable.
                ideal = math.ceil(got["evalhouse"]["calls"] / CONCURRENCY) * DELAY_S
                print(
                    f"  evalhouse / promptfoo wall: {ratios[-1]:.2f} (goal <= 0.7; ideal "
                    f"{ideal:.1f} s = ceil(calls / {CONCURRENCY}) x {DELAY_S} s, so no tool "
                    f"can go below {ideal / got['promptfoo']['wall']:.2f}; evalhouse's wall is "
                    f"{ideal / got['evalhouse']['wall']:.2f} of ideal, process start included)",
                    flush=True,
                )
            print(
                _line("evalhouse (batched)", timed(evalhouse("batched"), env, folder, url), count)
            )
        finally:
            if neighbour is not None:
                neighbour.kill()
                neighbour.wait()
        print(
            f"{condition}: evalhouse / promptfoo wall, median of {len(ratios)} pairs: "
            f"{statistics.median(ratios):.2f} (goal <= 0.7)",
            flush=True,
        )


def main() -> None:
    """Install promptfoo if needed, start the server and run the pairs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--pairs", type=int, default=2)
    args = parser.parse_args()
    binary = promptfoo_bin()
    if binary is None:
        return
    node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(DELAY_S), json.dumps(REPLY)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = f"http://127.0.0.1:{int(server.stdout.readline())}"
        print(
            f"{args.cases} cases, concurrency {CONCURRENCY}, judge answers after "
            f"{DELAY_S * 1000:.0f} ms; promptfoo {PROMPTFOO_VERSION} on node {node}; load "
            f"average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (shared machine)"
        )
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            cases = _write_synthetic(folder / "cases.jsonl", args.cases)
            run_pairs(folder, cases, url, binary, args.pairs)
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
