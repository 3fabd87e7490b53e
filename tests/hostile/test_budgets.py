"""Budgets, not per-item limits: a server that drips or never ends its answer, a YAML file
that reuses one large string, a config that names one file many times, integers longer
than Python converts, and a server that echoes the credential it was sent. Each is bounded
in time and memory and ends in one line, never a traceback or a stored secret."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from engine.http import HttpSession, RetryPolicy, SendError, parse_json, send_with_retries
from engine.lake import write_part
from engine.secrets import redact
from engine.settings import Paths
from tests.factories import result_record
from tests.hostile.conftest import GOOD_CASE, assert_refused, cli


class RawServer:
    """A loopback server that answers every connection with ``behaviour(conn)``."""

    def __init__(self, behaviour: str) -> None:
        self.behaviour = behaviour
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/"

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        started = time.monotonic()
        try:
            request = conn.recv(65536)
            if self.behaviour == "drip":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
                while not self.stop.is_set() and time.monotonic() - started < 20:
                    conn.sendall(b"x")
                    time.sleep(0.3)  # under the per-read limit, forever
            elif self.behaviour == "endless":
                conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
                chunk = b"x" * 65536
                framed = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
                while not self.stop.is_set() and time.monotonic() - started < 20:
                    conn.sendall(framed)
            elif self.behaviour == "echo":
                auth = next(
                    (
                        line.split(b":", 1)[1].strip()
                        for line in request.split(b"\r\n")
                        if line.lower().startswith(b"authorization:")
                    ),
                    b"",
                )
                body = b'{"answer": "you sent ' + auth + b'"}'
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                    + str(len(body)).encode()
                    + b"\r\nConnection: close\r\n\r\n"
                    + body
                )
        except OSError:
            pass
        finally:
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[RawServer]:
    raw = RawServer(request.param)
    yield raw
    raw.close()


def _send(url: str, policy: RetryPolicy, headers: dict[str, str] | None = None) -> object:
    async def go() -> object:
        session = HttpSession(max_connections=2)
        try:
            sent = await send_with_retries(
                session, url, policy=policy, parse=parse_json, content=b"{}", headers=headers
            )
            return sent.value
        finally:
            await session.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("server", ["drip"], indirect=True)
def test_a_dripping_server_hits_the_whole_request_deadline(server: RawServer) -> None:
    policy = RetryPolicy(retries=0, timeout_s=1.0, deadline_s=1.5)
    started = time.monotonic()
    with pytest.raises(SendError, match=r"no whole answer within 1\.5 s"):
        _send(server.url, policy)
    assert time.monotonic() - started < 4.0


def test_the_default_deadline_is_a_multiple_of_the_read_limit() -> None:
    assert RetryPolicy(timeout_s=10.0).deadline == 40.0


@pytest.mark.parametrize("server", ["endless"], indirect=True)
def test_an_endless_body_is_cut_at_the_reply_cap_and_not_retried(server: RawServer) -> None:
    policy = RetryPolicy(retries=3, timeout_s=5.0, max_reply_bytes=1_000_000)
    started = time.monotonic()
    with pytest.raises(SendError) as caught:
        _send(server.url, policy)
    assert "over 1,000,000 bytes" in str(caught.value) and caught.value.attempts == 1
    assert time.monotonic() - started < 5.0


@pytest.mark.parametrize("server", ["echo"], indirect=True)
def test_an_echoed_credential_never_reaches_the_lake(server: RawServer, tmp_path: Path) -> None:
    token = "tok-" + "q7w8e9r0t1y2u3i4"  # a literal header, not from the environment
    value = _send(server.url, RetryPolicy(retries=0), {"Authorization": f"Bearer {token}"})
    assert isinstance(value, dict) and token in value["answer"]  # the server did echo it
    part = write_part(
        tmp_path, "results", "r", 1, [result_record("r", "s1", response=value["answer"])]
    )
    assert part is not None
    stored = pq.read_table(part).column("response").to_pylist()[0]
    assert token not in stored and "***" in stored


def test_basic_credentials_in_a_url_are_masked_in_every_form() -> None:
    import base64

    from engine.secrets import register_url

    register_url("http://alice:s3cr3t-pw@127.0.0.1:9/x")
    basic = base64.b64encode(b"alice:s3cr3t-pw").decode()
    text = redact(f"Authorization: Basic {basic}; pair alice:s3cr3t-pw")
    assert basic not in text and "s3cr3t-pw" not in text


def test_yaml_reusing_one_large_string_is_refused(
    home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big = "x" * 200_000
    refs = ", ".join(["*s"] * 2000)  # 400 MB once expanded, 200 KB on disk
    path = tmp_path / "t.yaml"
    path.write_text(
        f"s: &s {big}\ntests:\n  - vars: {{question: q, notes: [{refs}]}}\n", encoding="utf-8"
    )
    outcome = cli(capsys, "run", "--test-set", str(path), "--name", "h", "--home", str(home.home))
    assert "characters of text" in assert_refused(outcome, mentions="t.yaml")


def test_a_config_naming_one_file_many_times_reads_it_once(
    home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = tmp_path / "cases.csv"
    cases.write_text("question,__expected\nHow much is Pro?,contains: 49\n", encoding="utf-8")
    refs = "\n".join(["  - file://cases.csv"] * 300)
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(f"prompts: ['{{{{question}}}}']\ntests:\n{refs}\n", encoding="utf-8")
    outcome = cli(
        capsys, "run", "--test-set", str(config), "--name", "h", "--estimate",
        "--home", str(home.home),
    )  # fmt: skip
    assert outcome.code == 0, outcome.err
    assert "1 cases" in outcome.err
    assert "named 299 more time(s) by file:// references; read once" in outcome.err


def test_files_a_config_names_share_one_byte_budget(tmp_path: Path) -> None:
    from engine.testsets import TestSetError, load_test_set

    for i in range(3):
        (tmp_path / f"c{i}.csv").write_text(
            "question\n" + "".join(f"q{i}-{n} {'y' * 60}\n" for n in range(40)), encoding="utf-8"
        )
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(
        "prompts: ['{{question}}']\ntests:\n  - file://c0.csv\n  - file://c1.csv\n"
        "  - file://c2.csv\n",
        encoding="utf-8",
    )
    assert len(load_test_set(config).cases) == 120
    with pytest.raises(TestSetError, match="budget of one test-set load"):
        load_test_set(config, max_file_bytes=6_000)  # each file fits, the three do not


@pytest.mark.parametrize(
    ("name", "content"),
    [
        (
            "t.jsonl",
            f'{GOOD_CASE}\n{{"id": "a", "query": "q", "metadata": {{"n": {"9" * 5000}}}}}\n',
        ),
        ("t.csv", f'query,metadata\nq,"{{""n"": {"9" * 5000}}}"\nq2,{{}}\n'),
    ],
)
def test_an_integer_too_long_to_convert_is_a_skipped_row(
    name: str, content: str, home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    outcome = cli(
        capsys, "run", "--test-set", str(path), "--name", "h", "--estimate",
        "--home", str(home.home),
    )  # fmt: skip
    assert "Traceback" not in outcome.err and outcome.code == 0, outcome.err
    assert f"{path}:2: " in outcome.err and "integer of over 4,300 digits" in outcome.err


def test_an_integer_too_long_in_yaml_is_refused_in_one_line(
    home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(f"tests:\n  - vars: {{question: q, n: {'9' * 5000}}}\n", encoding="utf-8")
    outcome = cli(capsys, "run", "--test-set", str(path), "--name", "h", "--home", str(home.home))
    assert "integer of over 4,300 digits" in assert_refused(outcome, mentions="t.yaml")


def test_scored_part_cuts_at_a_sentence_end_before_the_limit() -> None:
    from engine.run.pipeline import scored_part

    text = "One sentence here. " * 100
    assert scored_part(text, 10_000) == text
    cut = scored_part(text, 200)
    assert len(cut) <= 200 and cut.endswith(".") and text.startswith(cut)
    assert scored_part("x" * 500, 200) == "x" * 200  # no sentence end: cut at the limit


def test_a_long_answer_is_stored_whole_scored_in_part_and_flagged(
    home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from engine.lake import read_table

    answer = " ".join(["Pro costs $49 a month."] * 300)  # 6,899 characters
    case = json.loads(GOOD_CASE) | {"response": answer}
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps(case) + "\n", encoding="utf-8")
    outcome = cli(
        capsys, "run", "--test-set", str(path), "--name", "long", "--no-ingest",
        "--option", "max_scored_chars=1000", "--home", str(home.home),
    )  # fmt: skip
    assert outcome.code == 0, outcome.err
    run_id = outcome.out.strip().splitlines()[-1]
    results = read_table(home.lake, "results", run_id).to_pylist()
    assert len(results[0]["response"]) == len(answer) and "truncated" in results[0]["flags"]
    claims = read_table(home.lake, "verdicts", run_id).to_pylist()
    assert claims and all((c["response_end"] or 0) <= 1000 for c in claims)
