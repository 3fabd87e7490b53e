"""Starting child processes, in one place: the ``evalhouse`` command line, a foreground
child that never outlives its parent (``evalhouse dashboard``), and a detached child that
outlives it and records its exit code (runs launched from the dashboard).

It lives in the engine, the floor every layer may import, because both the CLI and the
dashboard start processes and neither may import the other.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
"""Signals a foreground parent passes on to its child."""

# The wrapper runs the command, then writes its exit code; "$@" keeps every argument
# intact whatever it contains (no shell quoting of user input anywhere).
_WRAPPER = '"$@" >"$LAUNCH_OUT" 2>"$LAUNCH_LOG"; echo $? >"$LAUNCH_RC"'


def evalhouse_command() -> list[str]:
    """The ``evalhouse`` console script next to this Python, else ``python -m evalhouse.cli``."""
    script = Path(sys.executable).with_name("evalhouse")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "evalhouse.cli"]


def die_with_parent() -> None:
    """In the child, before exec: ask Linux to send SIGTERM when this process dies, so
    even a SIGKILL of the parent (no handler runs) leaves no child behind."""
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG


def serve_child(
    command: list[str], grace_s: float = 10.0, while_serving: Callable[[], None] | None = None
) -> int:
    """Run ``command`` in the foreground and never leave it behind: SIGTERM, SIGINT and
    SIGHUP sent to this process are passed on to the child, and whatever way this process
    leaves (signal, exception), the child is stopped, then killed after ``grace_s``.
    ``while_serving`` runs here once the child has started (a signal stops it too).
    Returns the child's exit code, or 0 when it was stopped on purpose."""
    child = subprocess.Popen(command, preexec_fn=die_with_parent)
    received: list[int] = []
    busy: list[bool] = []

    def forward(signum: int, _frame: object) -> None:
        received.append(signum)
        if child.poll() is None:
            child.send_signal(signum)
        if busy:
            raise KeyboardInterrupt  # stop the work in hand; the child is stopped below

    previous = {sig: signal.signal(sig, forward) for sig in FORWARDED}
    try:
        if while_serving is not None:
            busy.append(True)
            try:
                while_serving()
            except KeyboardInterrupt:
                received.append(int(signal.SIGINT))  # stopped on purpose: stop the child too
            finally:
                busy.clear()
        code = 0 if received else child.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        _stop(child, grace_s)
    # Stopped on purpose (Ctrl-C, a service manager's SIGTERM) is a normal end.
    return 0 if received else code


def _stop(child: subprocess.Popen[bytes], grace_s: float) -> None:
    if child.poll() is None:
        child.terminate()
        try:
            child.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def launch_detached(
    command: list[str],
    *,
    out: Path,
    log: Path,
    rc: Path,
    cwd: Path,
    env: Mapping[str, str] | None = None,
) -> int:
    """Start ``command`` in a session of its own (it survives this process and its
    signals), standard output to ``out``, standard error to ``log``, and its exit code
    written to ``rc`` when it ends. Returns the process id of the wrapper shell, which
    leads the child's process group."""
    full_env = dict(os.environ if env is None else env)
    full_env.update(LAUNCH_OUT=str(out), LAUNCH_LOG=str(log), LAUNCH_RC=str(rc))
    sh = shutil.which("sh") or "/bin/sh"
    process = subprocess.Popen(
        [sh, "-c", _WRAPPER, "evalhouse-launch", *command],
        env=full_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        cwd=str(cwd),
    )
    return process.pid


def run_captured(command: list[str], timeout_s: float) -> tuple[int | None, str, str]:
    """Run ``command`` to its end with no input: (exit code, standard output, standard
    error); the exit code is None when it took longer than ``timeout_s``."""
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None, "", ""
    return done.returncode, done.stdout, done.stderr
