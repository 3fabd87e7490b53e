"""Runs on Ray: shards of an iteration's samples scored by Ray tasks that write the lake.

The driver (the run loop) keeps what it keeps for a local run: the run record and its lock,
iterations, progress, signals and resume. Only the scoring of an iteration's pending
samples moves (``RayShards`` is an ``engine.run.executors.Executor``): they are cut into
shards of at most ``flush_every`` samples, and each shard
is one Ray task that builds the run's parts once per worker process, sends its samples
through the same ``SamplePipeline`` and publishes them with the same commit protocol
(child parts, then the results part). So a killed worker or driver loses only the shards
in flight: their samples have no results part, and the driver (or a resume) redoes them.

Ray is imported here only, and only when a run asks for it (``executor: ray``): the
default path never imports it. Every node must see the evalhouse home at the same path
(a shared folder) and have evalhouse installed.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import socket
import tempfile
import time
from collections import Counter, deque
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from engine.candidates.plan import plan_for_run, template_errors
from engine.clock import utcnow
from engine.columns import columns
from engine.errors import InputError
from engine.lake import read_table
from engine.models import LAKE_TABLES, RunConfig, TestCase
from engine.run.components import Components, build_components, build_scorers
from engine.run.executors import PAUSE_POLL_S, Pending, Scope
from engine.run.identity import RunError, evalhouse_version
from engine.run.lanes import build_lanes
from engine.run.pipeline import SamplePipeline
from engine.run.writer import SUMMARY_COLUMNS, SampleKeyTuple, publish
from engine.secrets import register_url
from engine.settings import Paths

INSTALL_HINT = "Ray is not installed: pip install 'evalhouse[scale]'"
MAX_ATTEMPTS = 3
"""Times a shard is sent to a worker that dies under it before the run gives up."""

AUTH_MODE_ENV = "RAY_AUTH_MODE"
"""Ray's switch for token authentication (on by default for clusters of Ray 2.60)."""


def code_version() -> str:
    """The evalhouse version and a fingerprint of the lake's record columns: a worker must
    run the driver's, or it would write parts the driver's ingest reads differently."""
    digest = hashlib.sha256()
    for table, model in sorted(LAKE_TABLES.items()):
        for column in columns(model):
            digest.update(f"{table}.{column.name}:{column.duckdb_type};".encode())
    return f"{evalhouse_version()} (records {digest.hexdigest()[:12]})"


def check_version(driver: str) -> None:
    """``RunError`` naming both versions when this worker runs other code than the driver."""
    mine = code_version()
    if driver != mine:
        raise RunError(
            f"the Ray worker on {socket.gethostname()} runs evalhouse {mine} and the driver "
            f"{driver}: install the driver's evalhouse on every node, then resume the run"
        )


def _token_auth(address: str | None) -> None:
    """Turn Ray's token authentication on for a cluster when this machine has a token
    (``RAY_AUTH_TOKEN``, ``RAY_AUTH_TOKEN_PATH`` or ``~/.ray/auth_token``) and the user
    did not choose a mode: a Ray 2.60 cluster refuses a driver without it."""
    if address is None or os.environ.get(AUTH_MODE_ENV):
        return
    token_file = os.environ.get("RAY_AUTH_TOKEN_PATH") or str(Path.home() / ".ray" / "auth_token")
    if os.environ.get("RAY_AUTH_TOKEN") or Path(token_file).is_file():
        os.environ[AUTH_MODE_ENV] = "token"


def _start_failed(address: str | None, exc: Exception) -> RunError:
    where = f"Ray at {address}" if address else "a local Ray"
    if type(exc).__name__ == "AuthenticationError" or "authentication" in str(exc).lower():
        return RunError(
            f"{where} refused this driver: the cluster uses token authentication; put its "
            "token in ~/.ray/auth_token (or RAY_AUTH_TOKEN) and set RAY_AUTH_MODE=token"
        )
    return RunError(f"cannot start {where}: {exc}")


def ray_available() -> bool:
    """Whether the optional ``ray`` package can be imported (without importing it)."""
    import importlib.util

    return importlib.util.find_spec("ray") is not None


@dataclass(frozen=True)
class Shard:
    """Samples of one iteration scored by one Ray task."""

    index: int
    """Which shard of the iteration (a resent remainder keeps its number)."""
    iteration: int
    units: tuple[tuple[TestCase, str], ...]
    """(case, candidate id) pairs; candidate ``""`` is the run's own target."""

    @property
    def keys(self) -> set[SampleKeyTuple]:
        """(sample_id, candidate) of every sample of the shard."""
        return {(case.id, candidate) for case, candidate in self.units}


def shard_size(pending: int, slots: int, most: int) -> int:
    """Samples per shard: at most ``most`` (what one flush holds, so a dead worker loses at
    most that), and small enough that every slot gets about four shards of a short run."""
    return max(1, min(most, -(-pending // max(1, slots * 4))))


# ---------------------------------------------------------------------- the cluster


class RayPool:
    """A connection to Ray for one run: a local Ray started for it, or a cluster's."""

    def __init__(self, ray: Any, started_here: bool, temp_dir: str | None) -> None:
        self.ray = ray
        self.started_here = started_here
        self.temp_dir = temp_dir
        self._task: Any = None

    @classmethod
    def start(cls, address: str | None) -> RayPool:
        """Connect to ``address``, or start a local Ray on 127.0.0.1 with one CPU slot per
        core, no dashboard and no usage reporting. Raises RunError when Ray is missing or
        the cluster cannot be reached."""
        if not ray_available():
            raise RunError(INSTALL_HINT)
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        if address is None:
            # Read by Ray when it is imported: node addresses become 127.0.0.1, so every
            # server of the local Ray listens on the loopback interface only.
            os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        _token_auth(address)
        import ray

        if ray.is_initialized():  # a caller (a notebook, a test) connected already
            return cls(ray, False, None)
        temp_dir = tempfile.mkdtemp(prefix="evalhouse-ray-") if address is None else None
        try:
            ray.init(
                address=address,
                num_cpus=os.cpu_count() if address is None else None,
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
                _temp_dir=temp_dir,
            )
        except Exception as exc:
            if temp_dir is not None:
                shutil.rmtree(temp_dir, ignore_errors=True)
            raise _start_failed(address, exc) from exc
        return cls(ray, True, temp_dir)

    @property
    def slots(self) -> int:
        """CPU slots of the cluster: shards scored at once."""
        return max(1, int(self.ray.cluster_resources().get("CPU", 1)))

    def submit(self, config: RunConfig, paths: Paths, run_id: str, shard: Shard) -> Any:
        """Start a task scoring ``shard``; returns its object reference."""
        if self._task is None:
            # max_retries=0: a shard whose worker died is resent by the driver, which first
            # learns from the lake which of its samples were published (no duplicates).
            self._task = self.ray.remote(num_cpus=1, max_retries=0)(score_shard)
        return self._task.remote(
            config.model_dump_json(), str(paths.home), run_id, shard, code_version()
        )

    def close(self) -> None:
        """Disconnect; a local Ray started for the run is stopped and its files removed."""
        if self.started_here:
            self.ray.shutdown()
        if self.temp_dir is not None:
            shutil.rmtree(self.temp_dir, ignore_errors=True)


# ---------------------------------------------------------------------- the driver


class RayShards:
    """The Ray executor: scores an iteration's pending samples as Ray tasks."""

    def __init__(self, pool: RayPool) -> None:
        self.pool = pool

    @classmethod
    def start(cls, address: str | None) -> RayShards:
        """Connect to Ray (``RayPool.start``) for one run."""
        return cls(RayPool.start(address))

    def close(self) -> None:
        """Disconnect from Ray (a local Ray started for the run is stopped)."""
        self.pool.close()

    async def score(self, scope: Scope, iteration: int, pending: Pending) -> None:
        """Send every pending sample through a task; returns when all are published, or
        when the run is stopped (Ctrl-C / SIGTERM: no new shards; the shards in flight get
        ``cancel_grace_s`` to finish, then they are cancelled)."""
        size = shard_size(len(pending), self.pool.slots, scope.flush_every)
        units = [(case, lane.candidate) for case, lane in pending]
        queue = deque(
            Shard(n, iteration, tuple(units[i : i + size]))
            for n, i in enumerate(range(0, len(units), size))
        )
        inflight: dict[Any, Shard] = {}
        try:
            await self._drive(scope, queue, inflight)
        except BaseException:
            # Nothing of this run may keep writing once the driver gives up on it.
            if inflight:
                await self._cancel(scope, inflight)
            raise

    async def _drive(self, scope: Scope, queue: deque[Shard], inflight: dict[Any, Shard]) -> None:
        ray = self.pool.ray
        slots = self.pool.slots
        attempts: Counter[int] = Counter()
        stop_seen: float | None = None
        while queue or inflight:
            while queue and len(inflight) < 2 * slots and not scope.holding():
                shard = queue.popleft()
                attempts[shard.index] += 1
                inflight[self.pool.submit(scope.config, scope.paths, scope.run_id, shard)] = shard
            if not inflight:
                if queue and scope.paused.is_set() and not scope.stop.is_set():
                    await asyncio.sleep(PAUSE_POLL_S)  # paused with nothing in flight
                    continue
                break
            ready, _ = await asyncio.to_thread(ray.wait, list(inflight), num_returns=1, timeout=0.2)
            for ref in ready:
                await self._settle(scope, ref, inflight.pop(ref), attempts, queue)
            if scope.stop.is_set():
                stop_seen = stop_seen or time.monotonic()
                overdue = time.monotonic() - stop_seen > scope.config.cancel_grace_s
                if inflight and (scope.abandon.is_set() or overdue):
                    await self._cancel(scope, inflight)
                    inflight.clear()
                    return

    async def _settle(
        self, scope: Scope, ref: Any, shard: Shard, attempts: Counter[int], queue: deque[Shard]
    ) -> None:
        """Count a finished shard, or resend what a dead worker left undone."""
        ray = self.pool.ray
        try:
            rows: list[dict[str, Any]] = await asyncio.to_thread(ray.get, ref)
        except ray.exceptions.RayTaskError as exc:
            # The task itself raised (not a dead worker): the same shard would raise again.
            cause = exc.cause if isinstance(exc.cause, Exception) else exc
            if isinstance(cause, InputError):
                raise cause from exc
            raise RunError(f"a Ray task failed: {type(cause).__name__}: {cause}") from exc
        except ray.exceptions.RayError as exc:
            if scope.stop.is_set():
                return  # cancelled: a resume redoes the shard
            writer = scope.writer
            await asyncio.to_thread(writer.set_aside_orphans, shard.iteration, shard.keys)
            done = await asyncio.to_thread(_published, scope, shard)
            left = tuple(u for u in shard.units if (u[0].id, u[1]) not in done)
            _account(scope, shard.iteration, list(done.values()))
            if not left:
                return
            if attempts[shard.index] >= MAX_ATTEMPTS:
                raise RunError(
                    f"Ray workers died {MAX_ATTEMPTS} times scoring the same {len(left)} "
                    f"samples (last: {type(exc).__name__}); the run can be resumed"
                ) from exc
            retry = replace(shard, units=left)
            scope.progress.message(
                f"a Ray worker died ({type(exc).__name__}); {len(left)} samples sent again"
            )
            queue.appendleft(retry)
            return
        _account(scope, shard.iteration, rows)

    async def _cancel(self, scope: Scope, inflight: dict[Any, Shard]) -> None:
        ray = self.pool.ray
        for ref in inflight:
            ray.cancel(ref, force=True)
        # Wait (bounded) until the killed tasks are gone, so no late write follows the
        # run's final state. Their half-written shards are orphans a resume sets aside.
        await asyncio.to_thread(ray.wait, list(inflight), num_returns=len(inflight), timeout=10)
        scope.progress.message(f"cancelled {len(inflight)} Ray tasks in flight")


def _account(scope: Scope, iteration: int, rows: list[dict[str, Any]]) -> None:
    """Record a shard's published samples: the progress file and the run's totals."""
    if not rows:
        return
    scope.writer.record(iteration, rows)
    scope.counted(len(rows), sum(float(r.get("cost_usd") or 0.0) for r in rows))


def _published(scope: Scope, shard: Shard) -> dict[SampleKeyTuple, dict[str, Any]]:
    """Samples of ``shard`` whose results part is in the lake (a worker may die after
    publishing some of them)."""
    table = read_table(scope.paths.lake, "results", scope.run_id, shard.iteration)
    keys = shard.keys
    out: dict[SampleKeyTuple, dict[str, Any]] = {}
    for row in table.select(list(SUMMARY_COLUMNS)).to_pylist():
        key = (row["sample_id"], row["candidate"] or "")
        if key in keys:
            out[key] = row
    return out


# ---------------------------------------------------------------------- the worker


@dataclass
class _WorkerState:
    """A worker process's parts for one run, built by its first task and kept."""

    key: str
    loop: asyncio.AbstractEventLoop
    config: RunConfig
    parts: Components
    pipeline: SamplePipeline


_STATE: _WorkerState | None = None


def _worker_state(config_json: str, home: str, run_id: str) -> _WorkerState:
    global _STATE
    key = f"{home}\0{run_id}\0{config_json}"
    if _STATE is not None and _STATE.key == key:
        return _STATE
    if _STATE is not None:
        _STATE.loop.run_until_complete(_STATE.parts.aclose())
        _STATE.loop.close()
    config = RunConfig.model_validate_json(config_json)
    register_url(config.target.removeprefix("http:") if "://" in config.target else "")
    parts = build_components(config, Paths(home=Path(home)))
    parts.plan = plan_for_run(
        config, (), embedder=parts.embedder, judge=parts.judge, judges=parts.grader_judges
    )
    pipeline = SamplePipeline(
        build_scorers(config, parts),
        run_id=run_id,
        retries=config.retries,
        clock=utcnow,
        max_scored_chars=config.max_scored_chars,
        judge_repeats=config.judge_repeats,
    )
    # One event loop per worker process, kept: HTTP clients of targets and judges are
    # bound to the loop they were first used on.
    _STATE = _WorkerState(key, asyncio.new_event_loop(), config, parts, pipeline)
    return _STATE


async def _evaluate(state: _WorkerState, shard: Shard) -> list[Any]:
    plan = state.parts.plan
    if plan is not None and plan.candidates:
        cases = [case for case, _ in shard.units]
        plan = replace(plan, case_errors=template_errors(plan.candidates, cases))
    lanes = {lane.candidate: lane for lane in build_lanes(state.config, state.parts, plan)}
    queue: asyncio.Queue[tuple[TestCase, str]] = asyncio.Queue()
    for unit in shard.units:
        queue.put_nowait(unit)
    outputs: list[Any] = []

    async def worker() -> None:
        while not queue.empty():
            case, candidate = queue.get_nowait()
            outputs.append(await state.pipeline.evaluate(case, lanes[candidate], shard.iteration))

    at_once = min(state.config.concurrency, len(shard.units))
    await asyncio.gather(*(worker() for _ in range(at_once)))
    return outputs


def score_shard(
    config_json: str, home: str, run_id: str, shard: Shard, driver_version: str
) -> list[dict[str, Any]]:
    """The Ray task: score ``shard``, publish it to the lake, return its summary rows.
    Refused (``RunError``, before any work) on a worker whose code is not the driver's."""
    check_version(driver_version)
    state = _worker_state(config_json, home, run_id)
    outputs = state.loop.run_until_complete(_evaluate(state, shard))
    published = publish(Paths(home=Path(home)), run_id, outputs)
    return [r.model_dump(include=set(SUMMARY_COLUMNS)) for rs in published.values() for r in rs]
