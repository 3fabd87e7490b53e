"""``type: python``: a function of the project grades each output, in worker processes.

Each call runs in a separate process (``engine.graders.python_worker``) so that a call
past ``timeout_s`` can actually be stopped: the process is killed and the sample gets the
grader's error row, and the next call starts a fresh process. A few processes per grader
serve the run's concurrent samples; each is started on first need and imports the
function once. The first is started while the grader is built, so a module that fails to
import is refused before any output is generated.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import socket
import subprocess
import sys
import threading
import weakref
from multiprocessing.connection import Connection
from pathlib import Path

from engine.graders import python_worker
from engine.graders.base import (
    GradeInput,
    Grader,
    GraderConfigError,
    GraderError,
    GraderResult,
    passes,
)
from engine.graders.options import PythonOptions
from engine.graders.spec import GraderSpec

_RUN_WORKER = "import runpy, sys; runpy.run_path(sys.argv.pop(1), run_name='__main__')"
# The worker's file run by path: it imports the standard library only, where ``-m`` would
# import the engine's packages first (half a second more per worker).

START_TIMEOUT_S = 60.0
"""Longest a worker may take to start and import the grader's module (a loaded machine)."""
MAX_WORKERS = 4
"""Worker processes per python grader at most: enough for the run's concurrent samples on
a small machine; a grader is seldom the slow part of a sample."""


class _Worker:
    """One process that imports the function and answers one sample at a time."""

    def __init__(self, path: str, name: str) -> None:
        # A fresh interpreter, not a fork (the run has threads a fork would copy
        # mid-operation) nor multiprocessing's spawn (which re-runs the caller's main
        # module): it imports the worker module and the grader's file, nothing else.
        # Its standard output is standard error: prints never reach the run id line.
        ours, theirs = socket.socketpair()
        command = [sys.executable, "-c", _RUN_WORKER, str(Path(python_worker.__file__))]
        self._process = subprocess.Popen(
            [*command, str(theirs.fileno()), path, name],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=sys.stderr.fileno() if _has_fileno(sys.stderr) else subprocess.DEVNULL,
        )
        theirs.close()
        self._conn = Connection(ours.detach())

    def wait_ready(self) -> None:
        """Wait for the import. Raises GraderError (with the reason) when it failed."""
        message = self._receive(START_TIMEOUT_S, "start")
        if message[0] != "ready":
            self.stop()
            raise GraderError(str(message[1]))

    def call(self, fields: dict[str, object], timeout_s: float) -> tuple[str, float, str]:
        """One sample's outcome. Raises TimeoutError (the process is then stopped) or
        GraderError when the process died."""
        try:
            self._conn.send(fields)
        except (OSError, ValueError) as err:
            self.stop()
            raise GraderError(f"the grader's worker process is gone: {err}") from err
        kind, score, reason = self._receive(timeout_s, "call")
        assert isinstance(score, float)
        return str(kind), score, str(reason)

    def _receive(self, timeout_s: float, what: str) -> tuple[object, ...]:
        conn: Connection = self._conn
        if not conn.poll(timeout_s):
            self.stop()
            raise TimeoutError(what)
        try:
            message = conn.recv()
        except (EOFError, OSError):
            try:
                code: int | None = self._process.wait(1.0)
            except subprocess.TimeoutExpired:
                code = None
            self.stop()
            raise GraderError(f"the grader's worker process exited (code {code})") from None
        assert isinstance(message, tuple)
        return message

    @property
    def alive(self) -> bool:
        """Whether the process can take another call."""
        return self._process.poll() is None

    def stop(self) -> None:
        """Kill the process (a call past its limit may ignore gentler signals)."""
        if self._process.poll() is None:
            self._process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(5.0)
        self._conn.close()


def _has_fileno(stream: object) -> bool:
    try:
        return isinstance(stream.fileno(), int)  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return False


class _Workers:
    """The grader's processes: idle ones are reused, at most ``size`` exist at once."""

    def __init__(self, path: str, name: str, size: int) -> None:
        self._path, self._name = path, name
        self._idle: queue.LifoQueue[_Worker] = queue.LifoQueue()
        self._slots = threading.BoundedSemaphore(size)
        self._all: weakref.WeakSet[_Worker] = weakref.WeakSet()

    def start_one(self) -> None:
        """Start a worker and wait for its import (raises GraderError when it fails)."""
        worker = self._new()
        worker.wait_ready()
        self._idle.put(worker)

    def _new(self) -> _Worker:
        worker = _Worker(self._path, self._name)
        self._all.add(worker)
        return worker

    def call(self, fields: dict[str, object], timeout_s: float) -> tuple[str, float, str]:
        """One call on an idle worker (a new one when none is); blocking."""
        with self._slots:
            try:
                worker = self._idle.get_nowait()
            except queue.Empty:
                worker = self._new()
                worker.wait_ready()
            try:
                outcome = worker.call(fields, timeout_s)
            except BaseException:
                worker.stop()
                raise
            self._idle.put(worker)
            return outcome

    def close(self) -> None:
        """Stop every process."""
        for worker in list(self._all):
            worker.stop()


class PythonGrader(Grader):
    """A project function as a grader: score 0-1 and a reason per output."""

    def __init__(self, spec: GraderSpec, *, workers: int | None = None) -> None:
        super().__init__(spec)
        options = spec.options
        assert isinstance(options, PythonOptions) and options.module_path is not None
        self._options = options
        self._threshold = spec.threshold if spec.threshold is not None else 0.5
        _, _, name = options.function.rpartition(":")
        size = workers or min(MAX_WORKERS, os.cpu_count() or 1)
        self._workers = _Workers(options.module_path, name, size)
        try:
            self._workers.start_one()
        except (GraderError, TimeoutError) as err:
            why = str(err) if isinstance(err, GraderError) else "did not start in time"
            where = f" ({spec.source})" if spec.source else ""
            raise GraderConfigError(f"grader {spec.id!r}{where}: {why}") from err
        weakref.finalize(self, self._workers.close)

    async def grade(self, sample: GradeInput) -> GraderResult:
        """Call the function in a worker process; its failures raise GraderError."""
        case = sample.case
        fields: dict[str, object] = {
            "query": case.query,
            "response": sample.output,
            "reference": sample.expected,
            "contexts": list(case.effective_context),
            "metadata": dict(case.metadata),
        }
        limit = self._options.timeout_s
        try:
            kind, score, reason = await asyncio.to_thread(self._workers.call, fields, limit)
        except TimeoutError:
            raise GraderError(
                f"python grader {self.id!r}: {self._shown} did not return within "
                f"{limit:g}s; it was stopped"
            ) from None
        except GraderError as err:
            raise GraderError(f"python grader {self.id!r}: {err}") from None
        if kind != "ok":
            raise GraderError(f"python grader {self.id!r}: {self._shown} {reason}")
        return GraderResult(
            passed=passes(score, self._threshold),
            score=score,
            reason=reason or f"{self._shown} scored {score:g}",
        )

    @property
    def _shown(self) -> str:
        file, _, name = self._options.function.rpartition(":")
        return f"{Path(file).name}:{name}"

    def close(self) -> None:
        """Stop the worker processes (also done when the grader is collected)."""
        self._workers.close()
