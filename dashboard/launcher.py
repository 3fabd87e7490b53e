"""Launching runs from the dashboard: ``evalhouse run`` (and ``evalhouse compare-runs``, from
the Compare page) as a detached process.

The Streamlit process never scores anything itself: it writes the form's ``RunConfig`` to a
file and starts ``evalhouse run --config FILE`` in its own session (so a closed tab or a
restarted dashboard does not kill the run), with its standard error (progress lines) and
standard output (the run id, last line) written to files under ``<home>/launches/``, and its
exit code recorded when it ends (``engine.processes``). The sidebar shows progress by
tailing those files. No Streamlit here.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import tempfile
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from dashboard.upload_guard import uploaded_python
from engine.models import RunConfig
from engine.processes import evalhouse_command, launch_detached, run_captured
from engine.reanalysis import GENERATED_PREFIX
from engine.settings import Paths

__all__ = ["CompareSpec", "Launch", "evalhouse_command", "launch", "list_launches"]

TEST_SET_SUFFIXES = (".jsonl", ".json", ".csv")
"""Files of ``<home>/test-sets/`` offered by the launcher."""

_PROGRESS = re.compile(r"(\d+)\s*/\s*(\d+)")
_RUN_ID = re.compile(r"^[A-Za-z0-9._-]+$")
STRAGGLERS_S = 5.0
"""How long a cancel waits for the run's worker processes to leave before killing them."""
_STARTED = re.compile(r"(?:starting|resuming) run ([A-Za-z0-9._-]+) ")
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class CompareSpec:
    """What the Compare page's head-to-head button asks for: ``evalhouse compare-runs``."""

    run_a: str
    """Side A: the baseline, ``RUN`` or ``RUN:CANDIDATE``."""
    run_b: str
    """Side B: the challenger."""
    judge: str = "local"
    """Judge spec (``local`` is the rule over stored scores)."""
    concurrency: int = 8
    """Judge calls in flight."""

    @property
    def name(self) -> str:
        """How the launch is listed."""
        return f"{self.run_a} vs {self.run_b}"


@dataclass
class Launch:
    """One launched run (or comparison) and the files it writes."""

    launch_id: str
    """Folder-unique id (time stamp and name)."""
    spec: RunConfig | CompareSpec
    """What was launched: the run's config, or the comparison."""
    command: list[str]
    """The exact command line."""
    pid: int
    """Process id of the wrapper shell."""
    started_at: float
    """Unix time of the launch."""
    folder: str
    """``<home>/launches``."""
    extra: dict[str, str] = field(default_factory=dict)
    """Free notes (e.g. ``rerun_of``)."""
    only: tuple[str, ...] = ()
    """A run of only these sample ids (re-runs of failed samples or one domain)."""

    @property
    def log_path(self) -> Path:
        """Standard error of the run: progress lines and messages."""
        return Path(self.folder) / f"{self.launch_id}.log"

    @property
    def out_path(self) -> Path:
        """Standard output of the run: the run id on its last line."""
        return Path(self.folder) / f"{self.launch_id}.out"

    @property
    def rc_path(self) -> Path:
        """Exit code, written when the run ends."""
        return Path(self.folder) / f"{self.launch_id}.rc"

    @property
    def cancel_path(self) -> Path:
        """Written when a person cancels the run from the dashboard."""
        return Path(self.folder) / f"{self.launch_id}.cancel"

    def exit_code(self) -> int | None:
        """The exit code, or None while the run is going."""
        try:
            text = self.rc_path.read_text().strip()
        except FileNotFoundError:
            return None
        return int(text) if text.lstrip("-").isdigit() else None

    def alive(self) -> bool:
        """Whether the process still runs (reaps it when it is our finished child)."""
        try:
            pid, _ = os.waitpid(self.pid, os.WNOHANG)
            if pid == self.pid:
                return False
        except ChildProcessError:
            pass  # not our child (the dashboard restarted): fall back to a signal probe
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def status(self) -> str:
        """``running``, ``completed``, ``failed (exit N)``, ``cancelled (resumable)``,
        ``cancelling`` or ``stopped`` (ended without an exit code)."""
        code = self.exit_code()
        cancelled = self.cancel_path.exists()
        if code is None:
            if self.alive():
                return "cancelling" if cancelled else "running"
            return "cancelled (resumable)" if cancelled else "stopped"
        if cancelled and code != 0:
            return "cancelled (resumable)"
        return "completed" if code == 0 else f"failed (exit {code})"

    def cancel(self, *, grace_s: float = 15.0) -> str:
        """Stop the run cleanly: SIGTERM to the run (the CLI saves what it scored and marks
        the run cancelled, resumable with ``--resume``), the wrapper shell left alive so it
        records the exit code; after ``grace_s`` the whole process group is killed.
        Returns the status afterwards."""
        if self.exit_code() is not None or not self.alive():
            return self.status()
        self.cancel_path.write_text(str(time.time()), "utf-8")
        for pid in group_members(self.pid):
            if pid != self.pid:
                _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and self.alive() and self.exit_code() is None:
            time.sleep(0.2)
        if self.exit_code() is None and self.alive():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)  # the wrapper leads its own group
            self.alive()  # reap it when it is our child
        # The run's scoring workers leave within a second of it; none outlives the cancel.
        # Only the run's own processes: the wrapper shell must live to record the exit code.
        deadline = time.monotonic() + STRAGGLERS_S
        while self._stragglers() and time.monotonic() < deadline:
            time.sleep(0.1)
        for pid in self._stragglers():
            _signal(pid, signal.SIGKILL)
        return self.status()

    def _stragglers(self) -> list[int]:
        """Processes of the run's group other than the wrapper shell."""
        return [pid for pid in group_members(self.pid) if pid != self.pid]

    def run_id(self) -> str | None:
        """The run id the CLI printed (last line of standard output), once it has."""
        try:
            lines = [ln.strip() for ln in self.out_path.read_text("utf-8").splitlines()]
        except FileNotFoundError:
            return None
        lines = [ln for ln in lines if ln]
        return lines[-1] if lines and _RUN_ID.match(lines[-1]) else None

    def live_run_id(self) -> str | None:
        """The run id while the run goes: from its "starting run" (or "resuming run") line."""
        found = _STARTED.findall(tail(self.log_path, 200_000))
        return found[-1] if found else self.run_id()

    def progress(self) -> tuple[int, int] | None:
        """``(done, total)`` from the latest progress line of the log."""
        return parse_progress(tail(self.log_path, 4000))


def group_members(pgid: int) -> list[int]:
    """The processes of process group ``pgid`` (Linux ``/proc``; empty elsewhere)."""
    out: list[int] = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # fields after the command name (which may hold spaces): state ppid pgrp ...
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == pgid:
            out.append(int(entry.name))
    return out


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def run_arguments(
    paths: Paths,
    config_file: Path,
    only: tuple[str, ...] = (),
    *,
    estimate: bool = False,
    resume: str | None = None,
) -> list[str]:
    """The ``evalhouse run`` command line of a config file (every option is in the file),
    resuming run ``resume`` when given."""
    args = [
        *evalhouse_command(), "run", "--home", str(paths.home.resolve()),
        "--config", str(config_file),
    ]  # fmt: skip
    if only:
        args += ["--only", ",".join(only)]
    if resume:
        args += ["--resume", resume]
    return [*args, "--estimate"] if estimate else args


def write_config(config: RunConfig, target: Path) -> Path:
    """``config`` as the JSON file ``evalhouse run --config`` reads (every field, so the
    run is exactly what the form showed whatever the defaults become later)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(config.model_dump_json(indent=1), encoding="utf-8")
    return target


def compare_arguments(paths: Paths, spec: CompareSpec, *, estimate: bool = False) -> list[str]:
    """The full ``evalhouse compare-runs`` command line for ``spec`` (it ingests when done)."""
    args = [
        *evalhouse_command(),
        "compare-runs",
        "--home",
        str(paths.home),
        spec.run_a,
        spec.run_b,
        "--judge",
        spec.judge,
        "--concurrency",
        str(spec.concurrency),
    ]
    return [*args, "--estimate"] if estimate else args


def estimate(
    paths: Paths,
    spec: RunConfig | CompareSpec,
    *,
    only: tuple[str, ...] = (),
    timeout_s: float = 60.0,
) -> tuple[bool, str]:
    """``evalhouse run ... --estimate`` (or ``compare-runs``): (succeeded, what it printed)."""
    if isinstance(spec, RunConfig) and (refused := uploaded_python(paths, spec)) is not None:
        return False, refused
    with tempfile.TemporaryDirectory(prefix="evalhouse-estimate-") as folder:
        if isinstance(spec, CompareSpec):
            command = compare_arguments(paths, spec, estimate=True)
        else:
            config = write_config(spec, Path(folder) / "run-config.json")
            command = run_arguments(paths, config, only, estimate=True)
        code, out, err = run_captured(command, timeout_s)
    if code is None:
        return False, f"the estimate took longer than {timeout_s:.0f} s"
    text = (out.strip() + "\n" + err.strip()).strip()
    return code == 0, text


def _folder(paths: Paths, spec: RunConfig | CompareSpec) -> Path:
    # Comparisons get their own folder: the sidebar lists runs (samples, re-runs) only.
    folder = paths.home / "launches" / ("compare" if isinstance(spec, CompareSpec) else "")
    return folder.resolve()


def launch(
    paths: Paths,
    spec: RunConfig | CompareSpec,
    *,
    only: tuple[str, ...] = (),
    extra: dict[str, str] | None = None,
    resume: str | None = None,
) -> Launch:
    """Start ``evalhouse run`` (or ``compare-runs``) detached from the dashboard and record
    the launch (ValueError, nothing started: a python grader whose code was uploaded).
    Paths are stored absolute: the run starts in the home folder, and the warehouse keeps
    the test set path for the Sample page, wherever the dashboard is started from later."""
    if isinstance(spec, RunConfig):
        spec = spec.model_copy(update={"test_set": str(Path(spec.test_set).expanduser().resolve())})
        refused = uploaded_python(paths, spec)
        if refused is not None:
            raise ValueError(refused)
    folder = _folder(paths, spec)
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    launch_id = f"{stamp}-{_UNSAFE_NAME.sub('_', spec.name)[:40]}-{os.getpid() % 1000}"
    while (folder / f"{launch_id}.json").exists():
        launch_id += "x"
    if isinstance(spec, CompareSpec):
        command = compare_arguments(paths, spec)
    else:
        config = write_config(spec, folder / f"{launch_id}.config.json")
        command = run_arguments(paths, config, only, resume=resume)
    env = {**os.environ, "EVALHOUSE_HOME": str(paths.home.resolve())}
    pid = launch_detached(
        command,
        out=folder / f"{launch_id}.out",
        log=folder / f"{launch_id}.log",
        rc=folder / f"{launch_id}.rc",
        cwd=paths.home.resolve(),
        env=env,
    )
    record = Launch(
        launch_id, spec, command, pid, time.time(), str(folder), dict(extra or {}), only
    )
    (folder / f"{launch_id}.json").write_text(json.dumps(_stored(record), indent=2), "utf-8")
    return record


def _stored(record: Launch) -> dict[str, Any]:
    """The launch as JSON values (the config as its fields)."""
    stored = {f.name: getattr(record, f.name) for f in fields(Launch)}
    spec = record.spec
    stored["spec"] = spec.model_dump(mode="json") if isinstance(spec, RunConfig) else asdict(spec)
    return stored


def list_launches(paths: Paths, limit: int = 10, *, comparisons: bool = False) -> list[Launch]:
    """The most recent launches of runs (or of comparisons), newest first."""
    folder = paths.home / "launches" / ("compare" if comparisons else "")
    if not folder.is_dir():
        return []
    out: list[Launch] = []
    for meta in sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True):
        try:
            raw = json.loads(meta.read_text("utf-8"))
            if comparisons:
                raw["spec"] = CompareSpec(**raw["spec"])
            else:
                # launches recorded before the form wrote a RunConfig kept `only` in the spec
                spec = dict(raw["spec"])
                raw["only"] = tuple(spec.pop("only", raw.get("only", ())))
                raw["spec"] = RunConfig.model_validate(spec)
            out.append(Launch(**raw))
        except (OSError, ValueError, TypeError, KeyError):
            continue  # a half-written or foreign file: not ours to show
        if len(out) >= limit:
            break
    return out


def tail(path: Path, max_chars: int = 4000) -> str:
    """The end of a text file (empty when it does not exist yet)."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - max_chars))
            data = handle.read()
    except FileNotFoundError:
        return ""
    # Terminal-style progress redraws with \r: keep the latest state of each line.
    text = data.decode("utf-8", errors="replace")
    return "\n".join(line.split("\r")[-1] for line in text.split("\n"))


def parse_progress(text: str) -> tuple[int, int] | None:
    """``(done, total)`` of the last ``done/total`` progress figure in ``text``."""
    for line in reversed(text.splitlines()):
        match = _PROGRESS.search(line)
        if match and int(match.group(2)) > 0:
            return int(match.group(1)), int(match.group(2))
    return None


def list_test_sets(paths: Paths) -> list[Path]:
    """Test sets in ``<home>/test-sets/`` (JSONL, JSON, CSV), by name; a re-analysis's own
    working files are not test sets a person chose."""
    folder = paths.test_sets
    if not folder.is_dir():
        return []
    return sorted(
        p
        for p in folder.iterdir()
        if p.suffix.lower() in TEST_SET_SUFFIXES and not p.name.startswith(GENERATED_PREFIX)
    )


def save_upload(paths: Paths, file_name: str, content: bytes) -> Path:
    """Save an uploaded test set under ``<home>/test-sets/`` with a safe, fresh name."""
    base = Path(file_name).name
    stem, suffix = Path(base).stem, Path(base).suffix.lower()
    if suffix not in TEST_SET_SUFFIXES:
        raise ValueError(f"{base}: a test set must be .jsonl, .json or .csv")
    stem = _UNSAFE_NAME.sub("_", stem).strip("._") or "test-set"
    paths.test_sets.mkdir(parents=True, exist_ok=True)
    target = paths.test_sets / f"{stem}{suffix}"
    n = 1
    while target.exists() and target.read_bytes() != content:
        n += 1
        target = paths.test_sets / f"{stem}-{n}{suffix}"
    target.write_bytes(content)
    return target
