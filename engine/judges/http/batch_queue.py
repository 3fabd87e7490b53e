"""Batch mode of a judge (``--judge-mode batch``): prompts wait in a queue and go to the
OpenAI Batch API together, at half the price, instead of one call each.

Each judge call that misses the cache asks :meth:`BatchQueue.ask` with its body and its
cache key, which is also the line's ``custom_id`` (unique per prompt, so one prompt asked
twice is queued once). The queue sends what is waiting as one batch once no new prompt has
come for :data:`BATCH_SETTLE_S` seconds, once the oldest has waited
:data:`BATCH_GATHER_MAX_S`, or at :data:`BATCH_MAX_PROMPTS`; then it polls the batch every
:data:`BATCH_POLL_S` seconds and, when it ends, answers every waiting call. A call whose
line failed, or whose batch failed, expired, was cancelled or could not be created or read,
gets None: the client then asks live, at the full price, so a run never ends short.

Resumable: every batch created is written, with its keys, to a ledger file in the run's
state (``progress/<run_id>/judge-batches.json``) before anything waits on it. A restarted
or resumed run that asks one of those keys follows that batch again instead of paying for
a second one; a batch leaves the ledger once its results are read. Answers are also stored
in the judge cache as they arrive, so a run resumed after that reads them from there.

Rounds: a sample whose calls depend on earlier replies (claims extracted, then verified)
asks its second prompt only when the first batch has answered, so a run makes one batch
per round of dependent calls (two with the default judge), more when a round is larger
than ``BATCH_MAX_PROMPTS`` or its prompts trickle in slower than the settle time.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.files import atomic_write_text
from engine.http import SendError
from engine.judges.http.batch_api import CHAT_ENDPOINT, BatchApi, BatchStatus
from engine.secrets import redact

log = logging.getLogger("engine.judges.http.batch")

BATCH_MAX_PROMPTS = 10_000
"""Most prompts in one batch (the API takes 50,000 lines and 200 MB; judge prompts of a
few thousand tokens each stay well under both at 10,000)."""
BATCH_SETTLE_S = 2.0
"""A batch is sent once no new prompt has joined the queue for this long..."""
BATCH_GATHER_MAX_S = 60.0
"""...or once its oldest prompt has waited this long, whichever comes first."""
BATCH_POLL_S = 30.0
"""How often a batch's status is read while it runs."""
BATCH_POLL_FAILURES = 10
"""Status reads failing in a row (each after its own retries) before a batch's prompts
go live; the batch stays in the ledger, so a resumed run can still collect it."""
BATCH_MAX_WAIT_S = 25 * 3600.0
"""Longest a batch is followed: its 24 h window plus an hour for the API to finalise."""
LEDGER_NAME = "judge-batches.json"
"""The ledger's file name in the run's progress folder."""

Answer = Any
"""What the wire format's ``parse`` makes of a reply body (a ``ChatReply``)."""


def ledger_path(progress_root: Path, run_id: str) -> Path:
    """The ledger of ``run_id``'s batches: ``<progress>/<run_id>/judge-batches.json``."""
    return progress_root / run_id / LEDGER_NAME


class BatchLedger:
    """The batches a run created and the prompt keys each holds, on disk."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def read(self) -> dict[str, list[str]]:
        """batch id -> keys; an unreadable ledger is empty (its batches are paid again)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("batch ledger %s unreadable, starting afresh: %s", self.path, exc)
            return {}
        batches = data.get("batches") if isinstance(data, dict) else None
        if not isinstance(batches, dict):
            return {}
        return {str(k): [str(x) for x in v] for k, v in batches.items() if isinstance(v, list)}

    def _change(self, batch_id: str, keys: list[str] | None) -> None:
        with self._lock:
            batches = self.read()
            if keys is None:
                batches.pop(batch_id, None)
            else:
                batches[batch_id] = keys
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.path, json.dumps({"batches": batches}))

    def add(self, batch_id: str, keys: list[str]) -> None:
        """Record a created batch (before anything waits on it)."""
        self._change(batch_id, keys)

    def remove(self, batch_id: str) -> None:
        """Forget a batch whose results were read."""
        self._change(batch_id, None)


class BatchQueue:
    """Queues a judge's prompts into batches and answers each call when its batch ends."""

    def __init__(
        self,
        api: BatchApi,
        parse: Callable[[Any], Answer],
        ledger: BatchLedger | None = None,
        store: Callable[[str, Answer], None] | None = None,
    ) -> None:
        self.api = api
        self._parse = parse
        self.ledger = ledger
        self._store = store
        self.batches_created = 0
        """Batches this queue created (a resumed batch is not counted)."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._reset()

    def _reset(self) -> None:
        # Futures and tasks belong to one event loop: a new loop starts from the ledger.
        self._futures: dict[str, asyncio.Future[Answer | None]] = {}
        self._waiting: dict[str, dict[str, Any]] = {}
        self._first_at = self._last_at = 0.0
        self._tasks: set[asyncio.Task[None]] = set()
        self._followed: set[str] = set()
        self._flusher: asyncio.Task[None] | None = None
        known = self.ledger.read() if self.ledger is not None else {}
        self._known = {key: batch for batch, keys in known.items() for key in keys}
        self._batch_keys = known

    async def ask(self, key: str, body: dict[str, Any]) -> tuple[Answer | None, bool]:
        """The reply to ``body`` from a batch, or None when the batch could not answer it
        (the caller then asks live), and whether this caller pays for it: a prompt asked
        again while it waits is one line, paid by its first caller (as a cache hit)."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._loop = loop
            self._reset()
        future = self._futures.get(key)
        first = future is None
        if future is None:
            future = self._futures[key] = loop.create_future()
            batch_id = self._known.get(key)
            if batch_id is not None:
                self._follow(batch_id, self._batch_keys.get(batch_id, [key]))
            else:
                now = time.monotonic()
                if not self._waiting:
                    self._first_at = now
                self._waiting[key] = body
                self._last_at = now
                if self._flusher is None or self._flusher.done():
                    self._flusher = self._spawn(self._flush_when_settled())
        # Shielded: a cancelled sample must not cancel the answer other callers share.
        return await asyncio.shield(future), first

    def _spawn(self, coro: Any) -> asyncio.Task[None]:
        task: asyncio.Task[None] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _answer(self, key: str, reply: Answer | None) -> None:
        future = self._futures.pop(key, None)
        if future is not None and not future.done():
            future.set_result(reply)

    async def _flush_when_settled(self) -> None:
        while self._waiting:
            now = time.monotonic()
            settle_left = BATCH_SETTLE_S - (now - self._last_at)
            gather_left = BATCH_GATHER_MAX_S - (now - self._first_at)
            if len(self._waiting) >= BATCH_MAX_PROMPTS or min(settle_left, gather_left) <= 0:
                keys = list(self._waiting)[:BATCH_MAX_PROMPTS]
                prompts = {key: self._waiting.pop(key) for key in keys}
                self._first_at = time.monotonic()
                await self._submit(prompts)
            else:
                await asyncio.sleep(max(0.01, min(settle_left, gather_left)))

    async def _submit(self, prompts: dict[str, dict[str, Any]]) -> None:
        lines = [
            {"custom_id": key, "method": "POST", "url": CHAT_ENDPOINT, "body": body}
            for key, body in prompts.items()
        ]
        keys = list(prompts)
        try:
            batch = await self.api.create(await self.api.upload(lines))
        except SendError as err:
            log.warning("%s: no batch (%s); %d prompts go live", self.api.label, err, len(keys))
            for key in keys:
                self._answer(key, None)
            return
        self.batches_created += 1
        if self.ledger is not None:  # before anything waits on it: a kill now pays once
            await asyncio.to_thread(self.ledger.add, batch.id, keys)
        log.info("%s: batch %s of %d prompts created", self.api.label, batch.id, len(keys))
        self._follow(batch.id, keys)

    def _follow(self, batch_id: str, keys: list[str]) -> None:
        if batch_id not in self._followed:
            self._followed.add(batch_id)
            self._spawn(self._collect(batch_id, keys))

    async def _collect(self, batch_id: str, keys: list[str]) -> None:
        """Poll ``batch_id`` to its end, then answer its keys (None for what it did not)."""
        status = await self._wait_for(batch_id)
        answers = await self._results(status) if status is not None else {}
        for key, reply in answers.items():
            if self._store is not None:
                self._store(key, reply)
        missing = [key for key in keys if key not in answers]
        if status is not None and missing:
            log.warning(
                "%s: batch %s %s, %d of %d prompts unanswered; they go live",
                self.api.label,
                batch_id,
                status.status,
                len(missing),
                len(keys),
            )
        for key in keys:
            self._answer(key, answers.get(key))
        if status is not None and self.ledger is not None:
            await asyncio.to_thread(self.ledger.remove, batch_id)

    async def _wait_for(self, batch_id: str) -> BatchStatus | None:
        """The batch's final status; None when it cannot be read or outlives its window."""
        failures = 0
        deadline = time.monotonic() + BATCH_MAX_WAIT_S
        while time.monotonic() < deadline:
            try:
                status = await self.api.status(batch_id)
                failures = 0
                if status.done:
                    return status
            except SendError as err:
                failures += 1
                if failures >= BATCH_POLL_FAILURES:
                    log.warning("%s: batch %s unreadable: %s", self.api.label, batch_id, err)
                    return None
            await asyncio.sleep(BATCH_POLL_S)
        return None

    async def _results(self, status: BatchStatus) -> dict[str, Answer]:
        """Answered lines of a finished batch, parsed; lines that failed are left out."""
        if status.output_file_id is None:
            return {}
        try:
            lines = await self.api.lines(status.output_file_id)
        except SendError as err:
            log.warning("%s: results of %s unreadable: %s", self.api.label, status.id, err)
            return {}
        answers: dict[str, Answer] = {}
        for line in lines:
            response = line.get("response")
            key = line.get("custom_id")
            if not isinstance(key, str) or not isinstance(response, dict):
                continue
            if response.get("status_code") != 200:
                continue
            try:
                answers[key] = self._parse(response.get("body"))
            except (KeyError, TypeError, ValueError, IndexError) as exc:
                log.debug("%s: line %s unreadable: %s", self.api.label, key, redact(str(exc)))
        return answers

    async def aclose(self) -> None:
        """Stop polling (the ledger keeps unfinished batches for a resumed run); calls
        still waiting are cancelled, never sent live behind the run's back."""
        for future in self._futures.values():
            future.cancel()
        self._futures.clear()
        self._waiting.clear()
        tasks = [t for t in self._tasks if not t.done()]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
